"""El cambio de dirección de envío en el modelo offline: leer la dirección nueva del
mensaje y redactar lo que lee el cliente.

Función pura sobre texto: «cambia la dirección de envío del pedido P-... a Calle Mayor 5,
28013 Madrid» -> calle «Calle Mayor 5», código postal «28013», localidad «Madrid». El
código postal se busca después de quitar los números de pedido (su «-0025» parecería
uno); un número de 4 o 6 cifras donde iría el código postal se lee como un código postal
que no vale, y se dice al cliente en vez de inventar otro.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agente.modelo_offline.redaccion import ejecutada
from agente.modelo_offline.resultados import Llamada
from agente.modelo_offline.texto import RE_PEDIDO, limpiar_cola, normalizar
from nucleo.direcciones import provincia_de
from operaciones.direccion.declaracion import DIRECCION

__all__ = [
    "DireccionLeida",
    "cambiada",
    "valido",
    "codigo_postal_no_valido",
    "leer_direccion",
    "no_pendiente",
    "pedir_direccion",
]

RE_CP = re.compile(r"(?<![\d-])\d{5}(?![\d-])")
RE_CP_MALO = re.compile(r"(?<![\d-])\d{4}(?:\d{2})?(?![\d-])")
RE_VIA = re.compile(
    r"\b(?:calle|c/|avenida|avda\.?|av\.|plaza|pza\.?|paseo|camino|carretera|ctra\.?|ronda|"
    r"travesia|glorieta|pasaje|urbanizacion|callejon|via|rua|carrer)\b"
)
# Lo que separa la petición de la dirección: «... a Calle...», «... es: ...».
RE_CONECTOR = re.compile(r"(?:\ba\b|\bes\b|\bsera\b|\bpor\b|:)\s*")
RE_FIN_LOCALIDAD = re.compile(r"[.,;:()\n!?]|\s(?:y|por favor|gracias|porque)\b", re.IGNORECASE)


@dataclass(frozen=True)
class DireccionLeida:
    calle: str
    codigo_postal: str
    localidad: str

    @property
    def completa(self) -> bool:
        return bool(self.calle and self.codigo_postal and self.localidad)


def _sin_pedidos(texto: str) -> str:
    return RE_PEDIDO.sub(lambda m: " " * len(m.group(0)), texto)


def leer_direccion(fragmento: str) -> DireccionLeida:
    """La dirección nueva del ``fragmento`` (vacíos los trozos que no estén)."""
    texto = _sin_pedidos(fragmento)
    normal = normalizar(texto)
    # Si corrige la dirección en el mismo mensaje («... perdón, es Calle Mayor 7, 28013»), vale la última.
    cp = next(reversed(list(RE_CP.finditer(texto))), None) or RE_CP_MALO.search(texto)
    if cp is None:
        return DireccionLeida(calle="", codigo_postal="", localidad="")
    antes = texto[: cp.start()]
    via = next(reversed(list(RE_VIA.finditer(normal[: cp.start()]))), None)  # la última vía nombrada
    if via is not None:
        calle = antes[via.start():]
    else:
        conectores = list(RE_CONECTOR.finditer(normal[: cp.start()]))
        calle = antes[conectores[-1].end():] if conectores else ""
    despues = texto[cp.end():]
    fin = RE_FIN_LOCALIDAD.search(despues)
    localidad = limpiar_cola(despues[: fin.start()] if fin else despues)
    calle = limpiar_cola(calle)
    if not localidad and "," in calle:  # «Calle Mayor 5, Madrid 28013»
        calle, localidad = (limpiar_cola(p) for p in calle.rsplit(",", 1))
    return DireccionLeida(calle=calle, codigo_postal=cp.group(0), localidad=localidad)


def pedir_direccion(pedido: str | None) -> str:
    return (
        f"Para cambiar la dirección de envío del pedido {pedido} necesito la dirección nueva completa: "
        "calle con número, código postal (5 cifras) y localidad. ¿Me la indicas?"
    )


def codigo_postal_no_valido(codigo_postal: str) -> str:
    return (
        f"El código postal {codigo_postal} no es válido: son 5 cifras y las dos primeras, las de la "
        "provincia (01 a 52). No he cambiado nada; ¿puedes revisarlo?"
    )


def no_pendiente(pedido: str | None, estado: object) -> str:
    if estado == "cancelado":
        return f"El pedido {pedido} está cancelado: no hay envío cuya dirección cambiar."
    if estado == "entregado":
        return (f"El pedido {pedido} ya se ha entregado, así que su dirección de envío ya no se puede cambiar. "
                "Si no lo has recibido tú, dímelo y lo revisamos.")
    return (
        f"El pedido {pedido} ya ha salido hacia la dirección que indicaste, así que ya no puedo cambiarla. "
        "Si no vas a estar, puedes rechazar la entrega cuando llegue el transportista y el pedido volverá a "
        "la tienda, o esperar a recibirlo y devolverlo."
    )


def cambiada(pedido: str | None, llamada: Llamada) -> str:
    datos = ejecutada(DIRECCION.offline.palabra, DIRECCION.offline.clave_numero, pedido, llamada)
    if isinstance(datos, str):
        return datos
    numero = datos[DIRECCION.offline.clave_numero]
    pedido_final = datos.get("pedido", pedido)
    nueva = datos.get("direccion_nueva")
    anterior = datos.get("direccion_anterior")
    antes = f" (antes: {anterior})" if anterior else ""
    if datos.get("repetido"):
        return f"Ese cambio ya estaba hecho: el pedido {pedido_final} se enviará a {nueva} ({numero})."
    return (f"He cambiado la dirección de envío del pedido {pedido_final}: se enviará a {nueva}{antes}. "
            f"Número del cambio: {numero}.")


def valido(codigo_postal: str) -> bool:
    return provincia_de(codigo_postal) is not None


# Lo que lee el cliente del resultado de la herramienta (el nombre común de las frases).
redactar = cambiada
