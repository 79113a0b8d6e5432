"""Lectura del mensaje del cliente: qué pide, de qué pedido, qué producto y por qué.

Solo texto: normaliza (minúsculas, sin tildes, misma longitud), trocea el mensaje en
cláusulas de cada operación con efecto (las palabras que la reconocen las declara la
operación: ``nucleo.operaciones``, ``Offline.patron``, y su módulo aquí, ``FRASES``)
y saca de cada una una ``Tarea`` (intención, pedido, motivo, lo que se quiere cambiar y
por qué). Una palabra negada («sin devolverlo») no abre cláusula y una cláusula retirada
(«bueno no, mejor me lo quedo») no da tarea (``matices``); si no queda ninguna, la tarea
es ``retirada``: no se hace nada. No mira resultados de herramientas ni redacta nada:
eso es ``plan`` y ``redaccion``.

Trampa: las expresiones ``RE_*`` en minúsculas se aplican al texto normalizado, y los
índices que devuelven valen en el original porque ``normalizar`` conserva la longitud.
``normalizar``, ``RE_PEDIDO`` y el resto de utilidades de texto viven en ``texto`` (se
reexportan aquí).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from agente.modelo_offline import abono, comprension
from agente.modelo_offline.matices import Frases, negada, retractadas
from agente.modelo_offline.texto import (
    RE_PEDIDO,
    RE_SKU,
    limpiar_cola,
    normalizar,
    puntuacion,
    texto_de,
)
from nucleo.operaciones import OPERACIONES
from operaciones import carpetas

__all__ = [
    "MOTIVO_POR_DEFECTO",
    "PATRONES",
    "RE_PEDIDO",
    "RE_SKU",
    "INTENCIONES",
    "Intencion",
    "Tarea",
    "limpiar_cola",
    "lineas_mencionadas",
    "normalizar",
    "puntuacion",
    "tareas",
    "texto_de",
    "trocear",
]

MOTIVO_POR_DEFECTO = "devolución solicitada por el cliente"

# Lo que cada módulo de operación del modelo offline añade a su patrón o reconoce como renuncia.
FRASES = {
    carpetas.pieza(n, "declaracion").OPERACION.offline.intencion: Frases(
        intencion=carpetas.pieza(n, "declaracion").OPERACION.offline.intencion,
        tambien=carpetas.pieza(n, "maneras").TAMBIEN, renuncia=carpetas.pieza(n, "maneras").RENUNCIA)
    for n in carpetas.nombres()}
RENUNCIAS = {intencion: frases.renuncia for intencion, frases in FRASES.items() if frases.renuncia}


def _patron(intencion: str, patron: str) -> re.Pattern[str]:
    tambien = FRASES[intencion].tambien if intencion in FRASES else ""
    return re.compile(f"{patron}|{tambien}" if tambien else patron)


# Sobre texto normalizado (minúsculas, sin tildes): intención -> lo que la reconoce, de
# cada operación declarada y de su módulo aquí.
PATRONES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (op.offline.intencion, _patron(op.offline.intencion, op.offline.patron)) for op in OPERACIONES
)
# Las intenciones de las operaciones con efecto (una pregunta por sus normas es de la política).
DE_OPERACION = frozenset(i for i, _ in PATRONES)
RE_MOTIVO = re.compile(r"\b(?:porque|ya que|debido a que|pues|motivo:?)\s+(.+)", re.IGNORECASE | re.DOTALL)
RE_ENCARGADO = re.compile(
    r"\b(?:pregunt\w*|consult\w*|averigu\w*|dile|digale)\s+(?:\w+\s+){0,3}?"
    r"(?:al|a la|a los|con el|con la)\s+encargad"
)
RE_POLITICA = re.compile(r"\b(?:politica\w*|condiciones|plazos?|cuantos dias|normas?)\b")
RE_ESTADO = re.compile(
    r"\b(?:donde|estado|llega\w*|llegue\w*|enviad[oa]|entreg\w*|seguimiento|novedad\w*|cuando|como va\w*|"
    r"que (?:pasa|sabeis|hay) (?:con|de)|como (?:esta|anda|lleva)\w*)\b"
)
RE_DISPONIBILIDAD = re.compile(
    r"\b(?:teneis|tienen|tienes|tiene|hay|disponib\w*|stock|quedan?|vendeis|venden|"
    r"repuestos?|recambios?|reponer|repondreis)\b"
)


# Las de cada operación declarada más las que no mueven nada.
Intencion = str
INTENCIONES: frozenset[str] = frozenset(
    {"estado", "encargado", "politica", "ayuda", "anulada", "retirada", "aclarar", abono.INTENCION}
    | {i for i, _ in PATRONES}
)

# ---------------------------------------------------------------- productos


def lineas_mencionadas(lineas: Sequence[dict], texto: str) -> list[dict]:
    """Las líneas de un pedido que ``texto`` nombra: por SKU o, si no, por el nombre."""
    skus = {s.upper() for s in RE_SKU.findall(texto)}
    por_sku = [linea for linea in lineas if str(linea.get("sku", "")).upper() in skus]
    if por_sku:
        return por_sku
    puntos = [(puntuacion(str(linea.get("nombre", "")), texto), linea) for linea in lineas]
    mejor = max((p for p, _ in puntos), default=0)
    if mejor == 0:
        return []
    return [linea for p, linea in puntos if p == mejor]


# ---------------------------------------------------------------- tareas


@dataclass(frozen=True, kw_only=True)
class Tarea:
    """Una cosa que pide el cliente en su último mensaje.

    ``texto``: el fragmento original que la describe. En un cambio, ``origen`` es lo que
    tiene (antes de «por») y ``deseo`` lo que quiere (después); vacío = sin preferencia.
    """

    tipo: Intencion
    pedido: str | None = None
    texto: str = ""
    motivo: str = MOTIVO_POR_DEFECTO
    origen: str = ""
    deseo: str = ""

    def __post_init__(self) -> None:
        if self.tipo not in INTENCIONES:
            raise ValueError(f"intención desconocida: {self.tipo!r}")


def trocear(original: str) -> tuple[list[tuple[Intencion, int, int, int]], bool]:
    """Trocea el mensaje en cláusulas de cada operación: (intención, inicio, fin, marca), y si
    alguna palabra nombraba una operación (aunque fuera negada: «sin devolverlo»)."""
    normal = normalizar(original)
    tramos = [(m.start(), m.end(), intencion) for intencion, patron in PATRONES for m in patron.finditer(normal)]
    # Una marca dentro de otra más larga de otra operación no cuenta: «cambia la dirección
    # de envío» es un cambio de dirección, no un cambio de producto.
    marcas = sorted(
        (inicio, intencion) for inicio, fin, intencion in tramos
        if not any(o != intencion and a <= inicio < b and b - a > fin - inicio for a, b, o in tramos)
    )
    hubo = bool(marcas)
    # Una operación que se nombra y luego se niega en la misma petición («cancela el P-1...
    # no lo canceles») queda retirada.
    negadas = [(inicio, tipo) for inicio, tipo in marcas if negada(normal, inicio)]
    # «en vez de devolverme el dinero»: lo que sigue a la palabra negada de la misma operación, también.
    marcas = [(inicio, tipo) for inicio, tipo in marcas if not negada(normal, inicio)
              and not any(o == tipo and inicio - 30 <= n < inicio for n, o in negadas)]
    if not marcas:
        return [], hubo
    trozos = []
    for i, (inicio, tipo) in enumerate(marcas):
        desde = 0 if i == 0 else trozos[-1][4]
        hasta = len(original)
        if i + 1 < len(marcas):
            hasta, siguiente = comprension.cortes(normal, inicio, marcas[i + 1][0])
        else:
            siguiente = len(original)
        trozos.append([tipo, desde, hasta, inicio, siguiente])
    trozos = [t for i, t in enumerate(trozos) if i == 0 or not comprension.de_respaldo(normal, t[1], t[3])]
    # Une una cláusula con la anterior si es del mismo tipo y no nombra otro pedido.
    unidos: list[list[Any]] = []
    for trozo in trozos:
        if unidos and unidos[-1][0] == trozo[0]:
            previos = {p.upper() for p in RE_PEDIDO.findall(original[unidos[-1][1]:unidos[-1][2]])}
            nuevos = {p.upper() for p in RE_PEDIDO.findall(original[trozo[1]:trozo[2]])}
            if not previos or not nuevos or previos == nuevos:
                unidos[-1][2] = trozo[2]
                continue
        unidos.append(trozo)
    unidos = [t for t in unidos if not any(o == t[0] and t[3] < n < t[2] for n, o in negadas)]
    return [(t, d, h, m) for t, d, h, m, _s in unidos], hubo


def _motivo(fragmento: str) -> str:
    encontrado = RE_MOTIVO.search(fragmento)
    if not encontrado:
        return MOTIVO_POR_DEFECTO
    return limpiar_cola(encontrado.group(1)) or MOTIVO_POR_DEFECTO


def _de_carpeta(intencion: str, nombre: str) -> Any:
    """``nombre`` (``partir``, ``respuesta``) del ``paso.py`` de la operación con carpeta de
    ``intencion``, o None si no tiene carpeta o no lo define (``operaciones/carpetas.py``)."""
    for carpeta in carpetas.nombres():
        if carpetas.pieza(carpeta, "declaracion").OPERACION.offline.intencion == intencion:
            return getattr(carpetas.pieza(carpeta, "paso"), nombre, None)
    return None


def _pedido_en_historial(anteriores: Sequence[BaseMessage]) -> str | None:
    """El último pedido nombrado antes: por el cliente o en los argumentos de una llamada."""
    for mensaje in reversed(anteriores):
        candidatos: list[str] = []
        if isinstance(mensaje, HumanMessage):
            candidatos = RE_PEDIDO.findall(texto_de(mensaje))
        elif isinstance(mensaje, AIMessage):
            candidatos = [
                str(llamada["args"].get("pedido"))
                for llamada in mensaje.tool_calls
                if (llamada.get("args") or {}).get("pedido")
            ]
        if candidatos:
            return candidatos[-1].upper()
    return None


def _tarea_de_clausula(texto: str, tipo: Intencion, desde: int, hasta: int, pedido_previo: str | None) -> Tarea:
    fragmento = texto[desde:hasta]
    propios = [p.upper() for p in RE_PEDIDO.findall(fragmento)]
    if propios:
        pedido = propios[0]
    else:
        antes = [p.upper() for p in RE_PEDIDO.findall(texto[:desde])]
        todos = [p.upper() for p in RE_PEDIDO.findall(texto)]
        pedido = antes[-1] if antes else (todos[0] if todos else pedido_previo)
    if tipo in DE_OPERACION and "?" in fragmento and RE_POLITICA.search(normalizar(fragmento)):
        return Tarea(tipo="politica", texto=fragmento)  # «¿cuántos días hay para devolver algo?»
    if (partir := _de_carpeta(tipo, "partir")) is not None:  # lo que tiene y lo que quiere a cambio
        origen, deseo = partir(fragmento)
        return Tarea(tipo=tipo, pedido=pedido, texto=fragmento, origen=origen, deseo=deseo)
    return Tarea(tipo=tipo, pedido=pedido, texto=fragmento, motivo=_motivo(fragmento), origen=fragmento)


def _por_pedido(tarea: Tarea) -> list[Tarea]:
    """Una petición que nombra varios pedidos, una por pedido; un trozo que pregunta cómo va
    un pedido («y dime cómo va el P-2») es una consulta de su estado."""
    trozos = comprension.trozos_por_pedido(tarea.texto)
    if not trozos:
        return [tarea]
    partes = []
    for pedido, fragmento in trozos:
        if RE_ESTADO.search(normalizar(fragmento)) and not any(p.search(normalizar(fragmento)) for _, p in PATRONES):
            partes.append(Tarea(tipo="estado", pedido=pedido, texto=fragmento))
        else:
            partes.append(dataclasses.replace(tarea, pedido=pedido, texto=fragmento, origen=fragmento
                                              if _de_carpeta(tarea.tipo, "partir") is None else tarea.origen))
    return partes


def _respuesta_a_pregunta(texto: str, anteriores: Sequence[BaseMessage]) -> list[Tarea] | None:
    """Lo que responde a una pregunta del asistente («¿qué pedido?», «¿qué dirección?»): la
    petición anterior del cliente completada con esta respuesta; None si no encaja."""
    ultima_ia = next((m for m in reversed(anteriores) if isinstance(m, AIMessage) and not m.tool_calls), None)
    previo = next((m for m in reversed(anteriores) if isinstance(m, HumanMessage)), None)
    if ultima_ia is None or previo is None or "?" not in texto_de(ultima_ia):
        return None
    resto = [m for m in anteriores if m is not previo]
    completas = tareas(f"{texto_de(previo)}. {texto}", resto[: len(resto)])
    if any(t.tipo in {i for i, _ in PATRONES} for t in completas):
        return completas
    return None


def tareas(texto: str, anteriores: Sequence[BaseMessage]) -> list[Tarea]:
    """Las tareas del último mensaje ``texto``; ``anteriores`` da el pedido si no lo nombra.

    Un «sí» o un «no» a lo que propuso la última respuesta (un cambio, un reenvío) lo lee la
    operación que lo propuso (``respuesta`` en su ``paso.py``). Cualquier otra cosa se lee
    como un mensaje nuevo.
    """
    texto = comprension.corregir(texto)
    normal = normalizar(texto)
    pedidos = [p.upper() for p in RE_PEDIDO.findall(texto)]
    pedido_previo = _pedido_en_historial(anteriores)
    # «Sí» o «no» a lo que ofreció la última respuesta de una operación con carpeta (su ``paso.respuesta``).
    for carpeta in carpetas.nombres():
        respuesta = getattr(carpetas.pieza(carpeta, "paso"), "respuesta", None)
        if respuesta is not None and (respondidas := respuesta(texto, anteriores)) is not None:
            return respondidas
    if RE_ENCARGADO.search(normal):
        return [Tarea(tipo="encargado", texto=texto.strip())]
    # «¿Cuándo me devolvéis el dinero?» pregunta por un reembolso hecho, no pide otro.
    if abono.RE_ABONO.search(normal):
        pedido = pedidos[0] if pedidos else abono.pedido_del_ultimo_reembolso(anteriores) or pedido_previo
        return [Tarea(tipo=abono.INTENCION, pedido=pedido, texto=texto)]
    # "¿Cuál es el plazo de devolución?" pregunta por las normas, no pide una devolución.
    if not pedidos and RE_POLITICA.search(normal):
        return [Tarea(tipo="politica", texto=texto)]

    clausulas, hubo = trocear(texto)
    anuladas = retractadas(normal, [(t, m, h) for t, _d, h, m in clausulas], RENUNCIAS)
    # Tras «quiero devolver la tostadora, bueno no, mejor mandadme otra», lo que sigue a la
    # retirada habla del mismo producto: su cláusula empieza donde empezaba la retirada.
    clausulas = [(t, clausulas[i - 1][1] if i and i - 1 in anuladas else d, h, m)
                 for i, (t, d, h, m) in enumerate(clausulas)]
    vivas = [tarea for i, (t, d, h, _m) in enumerate(clausulas) if i not in anuladas
             for tarea in _por_pedido(_tarea_de_clausula(texto, t, d, h, pedido_previo))]
    if vivas:
        return vivas
    if not hubo and (seguida := _respuesta_a_pregunta(texto, anteriores)) is not None:
        return seguida
    if not hubo and comprension.queja_sin_peticion(normal) and not RE_ESTADO.search(normal):
        return [Tarea(tipo="aclarar", pedido=pedidos[0] if pedidos else pedido_previo, texto=texto)]
    if hubo:  # nombró operaciones, pero negadas o retiradas: «..., bueno no, mejor me lo quedo»
        return [Tarea(tipo="retirada", pedido=pedidos[0] if pedidos else pedido_previo, texto=texto)]

    if pedidos or RE_ESTADO.search(normal):
        return [Tarea(tipo="estado", pedido=pedidos[0] if pedidos else pedido_previo, texto=texto)]
    if RE_DISPONIBILIDAD.search(normal) and ("?" in texto or normal.strip().startswith("¿")):
        return [Tarea(tipo="encargado", texto=texto.strip())]
    return [Tarea(tipo="ayuda", texto=texto)]
