"""Redacción de las respuestas en español, a partir de los datos de las herramientas.

No inventa números: el número de reembolso o de sustitución, los importes y las fechas
salen siempre del resultado de una herramienta. Los importes se escriben con
``nucleo.dinero`` («1.234,50 EUR»).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date
from typing import Any

from agente.modelo_offline.resultados import Llamada, Resultado, cantidad
from nucleo import dinero

__all__ = [
    "AYUDA",
    "SIGUIENTE_PASO",
    "SIGUIENTE_PENDIENTE",
    "aclarar",
    "cambio_anulado",
    "condiciones",
    "ejecutada",
    "error",
    "eur",
    "fecha",
    "esperando_pedido",
    "estado_pedido",
    "lineas",
    "pedir_pedido",
    "pedido_no_consultado",
    "respuesta_encargado",
    "sin_herramienta",
]

AYUDA = (
    "Hola, soy el asistente de la tienda (modo sin conexión, basado en reglas). Puedo "
    "decirte dónde está tu pedido, tramitar una devolución o un reembolso, cambiar un "
    "producto por otro que tengamos en stock y trasladar preguntas al encargado. Para "
    "ayudarte necesito el número de pedido: empieza por P- y sigue con la fecha de compra y "
    "un número, como P-20260917-0041; por ejemplo: «quiero devolver la cafetera del pedido "
    "P-20260917-0041 porque gotea»."
)
IMPORTE_ILEGIBLE = "un importe que no he podido leer"


def eur(valor: Any, *, signo: bool = False) -> str:
    numero = cantidad(valor)
    return dinero.eur(numero, signo=signo) if numero is not None else IMPORTE_ILEGIBLE


def diferencia(valor: Any) -> str:
    """Una diferencia de precio sin signo: «90,10 EUR menos», «129,00 EUR más», «el mismo precio»."""
    numero = cantidad(valor)
    if numero is None:
        return IMPORTE_ILEGIBLE
    if not numero:
        return "el mismo precio"
    return f"{dinero.eur(abs(numero))} {'más' if numero > 0 else 'menos'}"


def fecha(valor: Any) -> str:
    try:
        return date.fromisoformat(str(valor)[:10]).strftime("%d/%m/%Y")
    except ValueError:
        return str(valor)


def lineas(lineas_pedido: Sequence[dict]) -> str:
    """Las líneas para el cliente: el nombre del producto, nunca su SKU."""
    return "; ".join(
        f"{linea.get('unidades', 1)} × {linea.get('nombre') or linea.get('sku')}, "
        f"{eur(linea.get('importe'))}"
        for linea in lineas_pedido
    )


# ---------------------------------------------------------------- sin datos


def sin_herramienta(nombre: str) -> str:
    return f"Ahora mismo no puedo usar la herramienta {nombre}; inténtalo más tarde."


# Las herramientas terminan a veces con instrucciones para el asistente («Dile al cliente
# que...», «revisa `linea` en consultar_pedido») o con los valores que acepta un argumento
# («(no_llego o llego_roto)»): son para el modelo, no para el cliente.
RE_INSTRUCCIONES = re.compile(r"[\s.;]*\bDile al cliente\b.*$", re.DOTALL)
_CLAVE = r"(?:`[^`]*`|\b[a-z]+_[a-z_]+\b)"
RE_PARA_EL_MODELO = re.compile(rf"\s*\([^()]*{_CLAVE}[^()]*\)|[;:,]\s*[^;:,]*{_CLAVE}[^;:]*$")
CIERRE = (".", "?", "!", "…", ".»", "?»", "!»")


def con_punto(texto: str) -> str:
    """``texto`` con su punto final (si no acaba ya en un signo de cierre)."""
    texto = texto.rstrip(" ;:,")
    return texto if texto.endswith(CIERRE) else f"{texto}."


# Lo que puede hacer el cliente tras una negativa que no dice otra cosa (siempre es cierto:
# el encargado recibe la consulta con ``consultar_encargado``).
SIGUIENTE_PASO = ("Si crees que es un error, puedo trasladar tu consulta al encargado de la tienda; "
                  "si necesitas otra cosa, dímelo.")
SIGUIENTE_PENDIENTE = "Te avisaremos por aquí en cuanto se complete."


def error(accion: str, resultado: Resultado, *, siguiente: str = SIGUIENTE_PASO) -> str:
    """La negativa «no he podido ...» con el motivo y qué puede hacer el cliente después."""
    texto = RE_PARA_EL_MODELO.sub("", RE_INSTRUCCIONES.sub("", resultado.texto))
    if re.search(r"\bqueda pendiente\b", texto):  # el sistema lo completará: eso es lo siguiente
        siguiente = SIGUIENTE_PENDIENTE
    return f"{con_punto(f'Lo siento, no he podido {accion}: {texto}')} {siguiente}"


def pedir_pedido(accion: str) -> str:
    return (f"Para {accion} necesito el número de pedido (empieza por P-, como P-20260917-0041). "
            "¿Me lo indicas?")


def esperando_pedido(pedido: str) -> str:
    return f"Sigo esperando los datos del pedido {pedido}."


def pedido_no_consultado(pedido: str, resultado: Resultado) -> str:
    if "no encontrado" in resultado.texto:
        return error(f"consultar el pedido {pedido}", resultado, siguiente=(
            "¿Puedes revisar el número de pedido? Empieza por P-, como P-20260917-0041."))
    return error(f"consultar el pedido {pedido}", resultado)


# ---------------------------------------------------------------- pedido y condiciones


def estado_pedido(datos: dict, pedido: str | None) -> str:
    partes = [f"Tu pedido {datos.get('pedido', pedido)} está en estado «{datos.get('estado')}»."]
    if datos.get("fecha"):
        partes.append(f"Lo hiciste el {fecha(datos['fecha'])}.")
    if datos.get("entregado_en"):
        dias = datos.get("dias_desde_entrega")
        hace = (" (hace 1 día)" if dias == 1 else f" (hace {dias} días)") if isinstance(dias, int) else ""
        partes.append(f"Se entregó el {fecha(datos['entregado_en'])}{hace}.")
    else:
        partes.append("Todavía no consta como entregado.")
    if datos.get("lineas"):
        partes.append(f"Contiene: {lineas(datos['lineas'])}.")
    partes.append(f"Importe total: {eur(datos.get('importe'))}.")
    reembolsado = cantidad(datos.get("reembolsado"))
    if reembolsado:
        partes.append(f"Ya se han reembolsado {eur(reembolsado)}.")
    return " ".join(partes)


def condiciones(resultado: Resultado) -> str:
    return con_punto(f"Estas son las condiciones de la tienda:\n{resultado.texto}")


def respuesta_encargado(resultado: Resultado) -> str:
    if resultado.tipo == "pendiente":
        return "Tu pregunta está pendiente de respuesta del encargado."
    if resultado.tipo == "rechazo":
        return (f"El encargado no ha respondido a tu pregunta. Motivo: {resultado.motivo_rechazo}. "
                "Si quieres, dime qué necesitas y lo vemos de otra forma.")
    if resultado.tipo == "error":
        return error("trasladar tu pregunta al encargado", resultado)
    return f"El encargado responde: {resultado.texto}"


# ---------------------------------------------------------------- operaciones


def ejecutada(operacion: str, numero: str, pedido: str | None, llamada: Llamada) -> str | dict:
    """El JSON de la ``operacion`` («reembolso», «cambio»: ``Offline.palabra``) ejecutada,
    con su ``numero`` (``Offline.clave_numero``).

    Si no llegó a ejecutarse (pendiente, rechazada, con error) o no trae número, el texto
    que lo explica.
    """
    resultado = llamada.resultado
    if resultado.tipo == "pendiente":
        return f"El {operacion} del pedido {pedido} sigue pendiente de revisión."
    if resultado.tipo == "rechazo":
        return (
            f"El encargado no ha aprobado el {operacion} del pedido {pedido}. "
            f"Motivo: {resultado.motivo_rechazo}. No he tramitado ningún {operacion}. Si tienes "
            "algo más que aportar (fotos, otra fecha de entrega), dímelo y se lo traslado al encargado."
        )
    if resultado.tipo == "error":
        return error(f"tramitar el {operacion} del pedido {pedido}", resultado)
    datos = resultado.datos
    if not isinstance(datos, dict) or not datos.get(numero):
        return f"Resultado del {operacion} del pedido {pedido}: {resultado.texto}"
    return datos




def cambio_anulado(pedido: str | None) -> str:
    return f"De acuerdo, no cambio nada del pedido {pedido}. Si necesitas otra cosa, dímelo."


def aclarar(pedido: str | None) -> str:
    """UNA pregunta corta cuando el cliente cuenta un problema sin decir qué quiere."""
    if pedido:
        return (f"Siento lo del pedido {pedido}. ¿Qué prefieres: cambiarlo por otro producto, devolverlo "
                "y recuperar el dinero, o quedártelo con una compensación?")
    return "Siento el problema. ¿Me dices el número de pedido (P-AAAAMMDD-NNNN) y qué ha pasado?"
