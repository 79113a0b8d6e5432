"""Modelo de chat offline basado en reglas. NO es un LLM.

Existe para que la demo y las pruebas de extremo a extremo funcionen sin clave de API
ni red. Lee la conversación con expresiones regulares, llama a las MISMAS herramientas
que usaría un LLM (llamadas reales, con ``tool_calls`` e ids únicos) y redacta la
respuesta final en español a partir del JSON que devuelven las herramientas. No inventa
números: el número de reembolso o de sustitución, los importes y las fechas salen
siempre del resultado de una herramienta.

Entiende las peticiones de la demo:

- estado de un pedido ("¿dónde está mi pedido P-20260925-0150?");
- devolución o reembolso, total o de una línea, con su motivo ("... porque gotea");
- cambio de un producto por otro en stock ("por una más barata", "por una del mismo
  precio", "por una más cara", "por la CAF-004");
- preguntas que solo sabe contestar el encargado ("¿tenéis la jarra de repuesto?",
  "pregunta al encargado ...");
- un reembolso y un cambio en el mismo mensaje: primero consulta lo que necesita y
  después propone las dos operaciones en UN solo mensaje (una sola revisión humana).

Es determinista para un mismo historial (salvo los ids aleatorios de las llamadas).
"""

from __future__ import annotations

import json
import re
import unicodedata
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    ToolMessage,
)
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

__all__ = ["ModeloOffline", "decidir"]

CONSULTAR_PEDIDO = "consultar_pedido"
CONSULTAR_POLITICA = "consultar_politica"
STOCK_ALTERNATIVAS = "stock_alternativas"
REEMBOLSAR = "reembolsar"
SUSTITUIR = "sustituir"
CONSULTAR_ENCARGADO = "consultar_encargado"

MOTIVO_POR_DEFECTO = "devolución solicitada por el cliente"

RE_PEDIDO = re.compile(r"\bP-\d{8}-\d{4}\b", re.IGNORECASE)
RE_SKU = re.compile(r"\b[A-Z]{3}-\d{3}\b", re.IGNORECASE)
# Sobre texto normalizado (minúsculas, sin tildes).
RE_DEVOLUCION = re.compile(r"\b(?:devol\w*|devuelv\w*|reembols\w*)")
RE_CAMBIO = re.compile(r"\b(?:cambi\w*|sustitu\w*|reemplaz\w*)")
RE_POR = re.compile(r"\bpor\b")
RE_MOTIVO = re.compile(r"\b(?:porque|ya que|debido a que|pues|motivo:?)\s+(.+)", re.IGNORECASE | re.DOTALL)
RE_ENCARGADO = re.compile(
    r"\b(?:pregunt\w*|consult\w*|averigu\w*|dile|digale)\s+(?:\w+\s+){0,3}?"
    r"(?:al|a la|a los|con el|con la)\s+encargad"
)
RE_POLITICA = re.compile(r"\b(?:politica\w*|condiciones|plazos?|cuantos dias|normas?)\b")
RE_ESTADO = re.compile(
    r"\b(?:donde|estado|llega\w*|llegue\w*|enviad[oa]|entreg\w*|seguimiento|novedad\w*|cuando)\b"
)
RE_DISPONIBILIDAD = re.compile(
    r"\b(?:teneis|tienen|tienes|tiene|hay|disponib\w*|stock|quedan?|vendeis|venden|"
    r"repuestos?|recambios?|reponer|repondreis)\b"
)
RE_BARATA = re.compile(r"\b(?:barat\w*|economic\w*|menos car[ao]s?|mas asequible\w*|inferior\w*)\b")
RE_IGUAL = re.compile(r"\b(?:mismo precio|misma precio|mismo importe|mismo valor|igual\w*|equivalente\w*)\b")
RE_CARA = re.compile(r"\b(?:mas car[ao]s?|mejor\w*|superior\w*|gama alta|car[ao]s?)\b")
RE_RECHAZO = re.compile(r"^User rejected the tool call for `(?P<nombre>[^`]+)`(?: with reason: (?P<motivo>.*))?", re.DOTALL)
RE_EDICION = re.compile(r"Executed instead: (?P<nombre>\w+) with arguments (?P<args>\{.*?\})\.", re.DOTALL)
AVISO_EDICION = "Aviso: un encargado modificó esta operación"
MARCA_RESPUESTA_EDITADA = "Tool response:"

# Palabras de los nombres de producto que no sirven para distinguir una línea de otra.
PALABRAS_VACIAS = {
    "para", "juego", "pack", "tazas", "con", "sin", "unidad", "unidades", "modelo",
}

RESPUESTA_AYUDA = (
    "Hola, soy el asistente de la tienda (modo sin conexión, basado en reglas). Puedo "
    "decirte dónde está tu pedido, tramitar una devolución o un reembolso, cambiar un "
    "producto por otro que tengamos en stock y trasladar preguntas al encargado. Para "
    "ayudarte necesito el número de pedido, con el formato P-AAAAMMDD-NNNN; por ejemplo: "
    "«quiero devolver la cafetera del pedido P-AAAAMMDD-NNNN porque gotea»."
)


# ---------------------------------------------------------------- utilidades de texto


def _normalizar(texto: str) -> str:
    """Minúsculas y sin tildes, con la MISMA longitud que el original (índices válidos)."""
    salida = []
    for caracter in texto.lower():
        descompuesto = unicodedata.normalize("NFKD", caracter)
        base = "".join(c for c in descompuesto if not unicodedata.combining(c))
        salida.append(base[:1] if base else " ")
    return "".join(salida)


def _palabras(texto: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", _normalizar(texto))


def _coinciden(a: str, b: str) -> bool:
    # Prefijo común para aceptar plurales y variantes ("cafetera"/"cafeteras").
    if a == b:
        return True
    corta, larga = sorted((a, b), key=len)
    return len(corta) >= 5 and larga.startswith(corta)


def _puntuacion(nombre: str, texto: str) -> int:
    palabras_texto = set(_palabras(texto))
    puntos = 0
    for palabra in set(_palabras(nombre)):
        if len(palabra) < 4 or palabra.isdigit() or palabra in PALABRAS_VACIAS:
            continue
        if any(_coinciden(palabra, p) for p in palabras_texto):
            puntos += 1
    return puntos


def _texto_de(mensaje: BaseMessage) -> str:
    contenido = mensaje.content
    if isinstance(contenido, str):
        return contenido
    partes = []
    for bloque in contenido:
        if isinstance(bloque, str):
            partes.append(bloque)
        elif isinstance(bloque, dict) and isinstance(bloque.get("text"), str):
            partes.append(bloque["text"])
    return "".join(partes)


def _decimal(valor: Any) -> Decimal | None:
    if valor is None:
        return None
    try:
        return Decimal(str(valor))
    except (InvalidOperation, ValueError):
        return None


def euros(valor: Any, *, signo: bool = False) -> str:
    """Importe en formato español: ``Decimal("1234.5")`` -> ``"1.234,50 EUR"``."""
    cantidad = _decimal(valor)
    if cantidad is None:
        return f"{valor} EUR"
    texto = f"{abs(cantidad):,.2f}".replace(",", "_").replace(".", ",").replace("_", ".")
    if cantidad < 0:
        texto = "-" + texto
    elif signo and cantidad > 0:
        texto = "+" + texto
    return f"{texto} EUR"


def _fecha(valor: Any) -> str:
    try:
        return date.fromisoformat(str(valor)[:10]).strftime("%d/%m/%Y")
    except ValueError:
        return str(valor)


def _limpiar_cola(texto: str) -> str:
    """Quita la puntuación final y una conjunción colgando ("... porque gotea y")."""
    anterior = None
    while anterior != texto:
        anterior = texto
        texto = re.sub(r"[\s,.;:!?¡¿]+$", "", texto)
        texto = re.sub(r"\s+(?:y|e|pero)$", "", texto, flags=re.IGNORECASE)
    return texto.strip()


# ---------------------------------------------------------------- lectura del historial


@dataclass
class Resultado:
    """Lo que la conversación devolvió a una llamada: éxito, error, rechazo o edición."""

    tipo: str  # "ok" | "error" | "rechazo" | "pendiente"
    texto: str = ""
    datos: Any = None
    editado: bool = False
    args_ejecutados: dict[str, Any] | None = None
    motivo_rechazo: str | None = None
    respuesta_humana: bool = False


@dataclass
class Llamada:
    nombre: str
    args: dict[str, Any]
    id: str
    resultado: Resultado


def _interpretar(mensaje: ToolMessage | None) -> Resultado:
    if mensaje is None:
        return Resultado("pendiente")
    texto = _texto_de(mensaje).strip()
    datos_lc = (mensaje.additional_kwargs or {}).get("lc_data") or {}
    respuesta_humana = isinstance(datos_lc, dict) and datos_lc.get("decision") == "respond"
    rechazo = RE_RECHAZO.match(texto)
    if rechazo:
        motivo = _limpiar_cola(rechazo.group("motivo") or "") or "sin indicar motivo"
        return Resultado("rechazo", texto=texto, motivo_rechazo=motivo)

    editado = False
    args_ejecutados = None
    cuerpo = texto
    if texto.startswith(AVISO_EDICION) or "Executed instead:" in texto:
        editado = True
        edicion = RE_EDICION.search(texto)
        if edicion:
            try:
                args_ejecutados = json.loads(edicion.group("args"))
            except json.JSONDecodeError:
                args_ejecutados = None
        posicion = texto.find(MARCA_RESPUESTA_EDITADA)
        cuerpo = texto[posicion + len(MARCA_RESPUESTA_EDITADA):].strip() if posicion >= 0 else ""

    if mensaje.status == "error" or cuerpo.startswith("Error:"):
        detalle = cuerpo.removeprefix("Error:").strip() or cuerpo
        return Resultado("error", texto=detalle, editado=editado, args_ejecutados=args_ejecutados)
    try:
        datos = json.loads(cuerpo)
    except (json.JSONDecodeError, TypeError):
        datos = None
    return Resultado(
        "ok",
        texto=cuerpo,
        datos=datos,
        editado=editado,
        args_ejecutados=args_ejecutados,
        respuesta_humana=respuesta_humana,
    )


def _llamadas_desde(mensajes: Sequence[BaseMessage]) -> list[Llamada]:
    respuestas = {m.tool_call_id: m for m in mensajes if isinstance(m, ToolMessage)}
    llamadas = []
    for mensaje in mensajes:
        if isinstance(mensaje, AIMessage):
            for llamada in mensaje.tool_calls:
                llamadas.append(
                    Llamada(
                        nombre=llamada["name"],
                        args=dict(llamada.get("args") or {}),
                        id=llamada.get("id") or "",
                        resultado=_interpretar(respuestas.get(llamada.get("id"))),
                    )
                )
    return llamadas


# ---------------------------------------------------------------- tareas


@dataclass
class Paso:
    """Siguiente paso de una tarea: leer, actuar (operación con firma posible) o terminar."""

    tipo: str  # "leer" | "actuar" | "fin"
    nombre: str = ""
    args: dict[str, Any] = field(default_factory=dict)
    texto: str = ""


@dataclass
class Tarea:
    tipo: str  # "estado" | "reembolso" | "cambio" | "encargado" | "politica" | "texto"
    pedido: str | None = None
    texto: str = ""  # fragmento original del cliente que describe la tarea
    motivo: str = MOTIVO_POR_DEFECTO


def _clausulas(original: str) -> list[tuple[str, int, int]]:
    """Trocea el mensaje en cláusulas de devolución o cambio: (tipo, inicio, fin)."""
    normal = _normalizar(original)
    marcas = [(m.start(), "reembolso") for m in RE_DEVOLUCION.finditer(normal)]
    marcas += [(m.start(), "cambio") for m in RE_CAMBIO.finditer(normal)]
    marcas.sort()
    if not marcas:
        return []
    trozos = []
    for i, (inicio, tipo) in enumerate(marcas):
        desde = 0 if i == 0 else inicio
        hasta = marcas[i + 1][0] if i + 1 < len(marcas) else len(original)
        trozos.append([tipo, desde, hasta])
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
    return [(t, d, h) for t, d, h in unidos]


def _motivo(fragmento: str) -> str:
    encontrado = RE_MOTIVO.search(fragmento)
    if not encontrado:
        return MOTIVO_POR_DEFECTO
    return _limpiar_cola(encontrado.group(1)) or MOTIVO_POR_DEFECTO


def _pedido_en_historial(anteriores: Sequence[BaseMessage]) -> str | None:
    """El último pedido nombrado antes: por el cliente o en los argumentos de una llamada."""
    for mensaje in reversed(anteriores):
        candidatos: list[str] = []
        if isinstance(mensaje, HumanMessage):
            candidatos = RE_PEDIDO.findall(_texto_de(mensaje))
        elif isinstance(mensaje, AIMessage):
            candidatos = [
                str(llamada["args"].get("pedido"))
                for llamada in mensaje.tool_calls
                if (llamada.get("args") or {}).get("pedido")
            ]
        if candidatos:
            return candidatos[-1].upper()
    return None


def _tareas(texto: str, anteriores: Sequence[BaseMessage]) -> list[Tarea]:
    normal = _normalizar(texto)
    pedidos = [p.upper() for p in RE_PEDIDO.findall(texto)]
    pedido_previo = _pedido_en_historial(anteriores)

    if RE_ENCARGADO.search(normal):
        return [Tarea("encargado", texto=texto.strip())]
    # "¿Cuál es el plazo de devolución?" pregunta por las normas, no pide una devolución.
    if not pedidos and RE_POLITICA.search(normal):
        return [Tarea("politica", texto=texto)]

    clausulas = _clausulas(texto)
    if clausulas:
        tareas = []
        for tipo, desde, hasta in clausulas:
            fragmento = texto[desde:hasta]
            propios = [p.upper() for p in RE_PEDIDO.findall(fragmento)]
            if propios:
                pedido = propios[0]
            else:
                antes = [p.upper() for p in RE_PEDIDO.findall(texto[:desde])]
                pedido = antes[-1] if antes else (pedidos[0] if pedidos else pedido_previo)
            motivo = _motivo(fragmento) if tipo == "reembolso" else MOTIVO_POR_DEFECTO
            tareas.append(Tarea(tipo, pedido=pedido, texto=fragmento, motivo=motivo))
        return tareas

    if pedidos or RE_ESTADO.search(normal):
        pedido = pedidos[0] if pedidos else pedido_previo
        return [Tarea("estado", pedido=pedido, texto=texto)]
    if RE_DISPONIBILIDAD.search(normal) and ("?" in texto or normal.strip().startswith("¿")):
        return [Tarea("encargado", texto=texto.strip())]
    return [Tarea("texto", texto=RESPUESTA_AYUDA)]


# ---------------------------------------------------------------- decisiones por tarea


class _Contexto:
    """Llamadas ya hechas en el turno actual y herramientas disponibles."""

    def __init__(self, llamadas: list[Llamada], disponibles: set[str] | None) -> None:
        self.llamadas = llamadas
        self.disponibles = disponibles

    def hay(self, nombre: str) -> bool:
        return self.disponibles is None or nombre in self.disponibles

    def buscar(self, nombre: str, **filtro: Any) -> Llamada | None:
        for llamada in reversed(self.llamadas):
            if llamada.nombre != nombre:
                continue
            if all(str(llamada.args.get(k, "")).upper() == str(v).upper() for k, v in filtro.items()):
                return llamada
        return None


def _sin_herramienta(nombre: str) -> Paso:
    return Paso("fin", texto=f"Ahora mismo no puedo usar la herramienta {nombre}; inténtalo más tarde.")


def _error(accion: str, resultado: Resultado) -> str:
    return f"Lo siento, no he podido {accion}: {resultado.texto}"


def _pedido_consultado(tarea: Tarea, ctx: _Contexto, accion: str) -> tuple[Paso | None, dict | None]:
    """Paso de lectura del pedido si falta, o el JSON del pedido si ya se leyó."""
    if not tarea.pedido:
        return (
            Paso(
                "fin",
                texto=f"Para {accion} necesito el número de pedido (formato P-AAAAMMDD-NNNN). "
                "¿Me lo indicas?",
            ),
            None,
        )
    llamada = ctx.buscar(CONSULTAR_PEDIDO, pedido=tarea.pedido)
    if llamada is None:
        if not ctx.hay(CONSULTAR_PEDIDO):
            return _sin_herramienta(CONSULTAR_PEDIDO), None
        return Paso("leer", CONSULTAR_PEDIDO, {"pedido": tarea.pedido}), None
    resultado = llamada.resultado
    if resultado.tipo == "pendiente":
        return Paso("fin", texto=f"Sigo esperando los datos del pedido {tarea.pedido}."), None
    if resultado.tipo != "ok" or not isinstance(resultado.datos, dict):
        texto = _error(f"consultar el pedido {tarea.pedido}", resultado)
        if "no encontrado" in resultado.texto:
            texto += ". ¿Puedes revisar el número de pedido?"
        return Paso("fin", texto=texto), None
    return None, resultado.datos


def _lineas_mencionadas(pedido: dict, texto: str) -> list[dict]:
    lineas = [linea for linea in pedido.get("lineas") or [] if isinstance(linea, dict)]
    skus = {s.upper() for s in RE_SKU.findall(texto)}
    por_sku = [linea for linea in lineas if str(linea.get("sku", "")).upper() in skus]
    if por_sku:
        return por_sku
    puntos = [(_puntuacion(str(linea.get("nombre", "")), texto), linea) for linea in lineas]
    mejor = max((p for p, _ in puntos), default=0)
    if mejor == 0:
        return []
    return [linea for p, linea in puntos if p == mejor]


def _descripcion_lineas(lineas: list[dict]) -> str:
    return "; ".join(
        f"{linea.get('unidades', 1)} × {linea.get('nombre')} ({linea.get('sku')}), "
        f"{euros(linea.get('importe'))}"
        for linea in lineas
    )


def _paso_estado(tarea: Tarea, ctx: _Contexto) -> Paso:
    paso, pedido = _pedido_consultado(tarea, ctx, "consultar tu pedido")
    if paso:
        return paso
    partes = [f"Tu pedido {pedido.get('pedido', tarea.pedido)} está en estado «{pedido.get('estado')}»."]
    if pedido.get("fecha"):
        partes.append(f"Lo hiciste el {_fecha(pedido['fecha'])}.")
    if pedido.get("entregado_en"):
        dias = pedido.get("dias_desde_entrega")
        hace = f" (hace {dias} días)" if isinstance(dias, int) else ""
        partes.append(f"Se entregó el {_fecha(pedido['entregado_en'])}{hace}.")
    else:
        partes.append("Todavía no consta como entregado.")
    lineas = pedido.get("lineas") or []
    if lineas:
        partes.append(f"Contiene: {_descripcion_lineas(lineas)}.")
    partes.append(f"Importe total: {euros(pedido.get('importe'))}.")
    reembolsado = _decimal(pedido.get("reembolsado"))
    if reembolsado:
        partes.append(f"Ya se han reembolsado {euros(reembolsado)}.")
    return Paso("fin", texto=" ".join(partes))


def _paso_reembolso(tarea: Tarea, ctx: _Contexto) -> Paso:
    hecha = ctx.buscar(REEMBOLSAR, pedido=tarea.pedido) if tarea.pedido else None
    if hecha is not None:
        return Paso("fin", texto=_texto_reembolso(tarea.pedido, hecha))
    paso, pedido = _pedido_consultado(tarea, ctx, "tramitar la devolución")
    if paso:
        return paso
    reembolsable = _decimal(pedido.get("reembolsable")) or Decimal("0")
    if reembolsable <= 0:
        return Paso(
            "fin",
            texto=f"El pedido {tarea.pedido} no tiene importe pendiente de reembolsar "
            f"(ya reembolsado: {euros(pedido.get('reembolsado', '0'))}).",
        )
    todas = [linea for linea in pedido.get("lineas") or [] if isinstance(linea, dict)]
    elegidas = _lineas_mencionadas(pedido, tarea.texto)
    args: dict[str, Any]
    if elegidas and len(elegidas) < len(todas):
        importe = sum((_decimal(linea.get("importe")) or Decimal("0") for linea in elegidas), Decimal("0"))
        importe = min(importe, reembolsable)
        args = {
            "pedido": tarea.pedido,
            "importe": f"{importe:.2f}",
            "motivo": tarea.motivo,
            "lineas": [int(linea["linea"]) for linea in elegidas],
        }
    else:
        args = {"pedido": tarea.pedido, "importe": f"{reembolsable:.2f}", "motivo": tarea.motivo}
    if not ctx.hay(REEMBOLSAR):
        return _sin_herramienta(REEMBOLSAR)
    return Paso("actuar", REEMBOLSAR, args)


def _texto_reembolso(pedido: str | None, llamada: Llamada) -> str:
    resultado = llamada.resultado
    propuesto = llamada.args.get("importe")
    if resultado.tipo == "pendiente":
        return f"El reembolso del pedido {pedido} sigue pendiente de revisión."
    if resultado.tipo == "rechazo":
        return (
            f"El encargado no ha aprobado el reembolso del pedido {pedido}. "
            f"Motivo: {resultado.motivo_rechazo}. No he tramitado ningún reembolso."
        )
    if resultado.tipo == "error":
        return _error(f"tramitar el reembolso del pedido {pedido}", resultado)
    datos = resultado.datos if isinstance(resultado.datos, dict) else None
    if not datos or not datos.get("reembolso"):
        return f"Resultado del reembolso del pedido {pedido}: {resultado.texto}"
    numero = datos["reembolso"]
    importe = euros(datos.get("importe"))
    pedido_final = datos.get("pedido", pedido)
    if resultado.editado:
        antes = ""
        if _decimal(propuesto) is not None and _decimal(propuesto) != _decimal(datos.get("importe")):
            antes = f" (la propuesta inicial era de {euros(propuesto)})"
        return (
            f"Un encargado ha revisado y ajustado la operación antes de tramitarla. "
            f"He tramitado el reembolso {numero} de {importe} del pedido {pedido_final}{antes}."
        )
    if datos.get("repetido"):
        return f"Ese reembolso ya estaba tramitado: {numero} de {importe} del pedido {pedido_final}."
    return f"He tramitado el reembolso {numero} de {importe} del pedido {pedido_final}."


def _elegir_alternativa(alternativas: list[dict], deseo: str) -> dict | None:
    normal = _normalizar(deseo)
    skus = {s.upper() for s in RE_SKU.findall(deseo)}
    if skus:
        return next((a for a in alternativas if str(a.get("sku", "")).upper() in skus), None)

    def diferencia(a: dict) -> Decimal:
        return _decimal(a.get("diferencia")) or Decimal("0")

    if RE_BARATA.search(normal):
        baratas = [a for a in alternativas if diferencia(a) < 0]
        return min(baratas, key=diferencia) if baratas else None
    if RE_IGUAL.search(normal):
        return next((a for a in alternativas if diferencia(a) == 0), None)
    if RE_CARA.search(normal):
        caras = [a for a in alternativas if diferencia(a) > 0]
        return max(caras, key=diferencia) if caras else None
    puntos = [(_puntuacion(str(a.get("nombre", "")), deseo), a) for a in alternativas]
    mejor = max((p for p, _ in puntos), default=0)
    return next((a for p, a in puntos if p == mejor), None) if mejor else None


def _paso_cambio(tarea: Tarea, ctx: _Contexto) -> Paso:
    normal = _normalizar(tarea.texto)
    verbo = RE_CAMBIO.search(normal)
    corte = RE_POR.search(normal, verbo.end() if verbo else 0)
    origen = tarea.texto[: corte.start()] if corte else tarea.texto
    deseo = tarea.texto[corte.end():] if corte else ""

    hecha = ctx.buscar(SUSTITUIR, pedido=tarea.pedido) if tarea.pedido else None
    if hecha is not None:
        return Paso("fin", texto=_texto_sustitucion(tarea.pedido, hecha))
    paso, pedido = _pedido_consultado(tarea, ctx, "tramitar el cambio")
    if paso:
        return paso
    todas = [linea for linea in pedido.get("lineas") or [] if isinstance(linea, dict)]
    elegidas = _lineas_mencionadas(pedido, origen)
    if not elegidas and len(todas) == 1:
        elegidas = todas
    if len(elegidas) != 1:
        return Paso(
            "fin",
            texto=f"¿Qué producto del pedido {tarea.pedido} quieres cambiar? "
            f"Contiene: {_descripcion_lineas(todas)}.",
        )
    linea = elegidas[0]
    sku = str(linea.get("sku"))
    consulta = ctx.buscar(STOCK_ALTERNATIVAS, sku=sku)
    if consulta is None:
        if not ctx.hay(STOCK_ALTERNATIVAS):
            return _sin_herramienta(STOCK_ALTERNATIVAS)
        return Paso("leer", STOCK_ALTERNATIVAS, {"sku": sku})
    if consulta.resultado.tipo != "ok" or not isinstance(consulta.resultado.datos, dict):
        return Paso("fin", texto=_error(f"consultar alternativas para {sku}", consulta.resultado))
    alternativas = [a for a in consulta.resultado.datos.get("alternativas") or [] if isinstance(a, dict)]
    nombre = linea.get("nombre", sku)
    if not alternativas:
        return Paso(
            "fin",
            texto=f"Lo siento, ahora mismo no hay ninguna alternativa en stock para {nombre} ({sku}) "
            "en tu tienda. Si lo prefieres, puedo tramitar la devolución.",
        )
    if not deseo.strip():
        opciones = "; ".join(
            f"{a.get('sku')} {a.get('nombre')} ({euros(a.get('pvp'))}, diferencia "
            f"{euros(a.get('diferencia'), signo=True)})"
            for a in alternativas
        )
        return Paso(
            "fin",
            texto=f"Para {nombre} ({sku}) tenemos en stock: {opciones}. ¿Por cuál quieres "
            f"cambiarlo? Por ejemplo: «cambiar {sku} del pedido {tarea.pedido} por la "
            f"{alternativas[0].get('sku')}».",
        )
    elegida = _elegir_alternativa(alternativas, deseo)
    if elegida is None:
        return Paso(
            "fin",
            texto=f"Lo siento, no hay ninguna alternativa en stock para {nombre} ({sku}) que "
            f"encaje con lo que pides ({_limpiar_cola(deseo.strip())}).",
        )
    if not ctx.hay(SUSTITUIR):
        return _sin_herramienta(SUSTITUIR)
    return Paso(
        "actuar",
        SUSTITUIR,
        {"pedido": tarea.pedido, "sku_original": sku, "sku_nuevo": str(elegida.get("sku"))},
    )


def _texto_sustitucion(pedido: str | None, llamada: Llamada) -> str:
    resultado = llamada.resultado
    if resultado.tipo == "pendiente":
        return f"El cambio del pedido {pedido} sigue pendiente de revisión."
    if resultado.tipo == "rechazo":
        return (
            f"El encargado no ha aprobado el cambio del pedido {pedido}. "
            f"Motivo: {resultado.motivo_rechazo}. No he tramitado ningún cambio."
        )
    if resultado.tipo == "error":
        return _error(f"tramitar el cambio del pedido {pedido}", resultado)
    datos = resultado.datos if isinstance(resultado.datos, dict) else None
    if not datos or not datos.get("sustitucion"):
        return f"Resultado del cambio del pedido {pedido}: {resultado.texto}"
    diferencia = _decimal(datos.get("diferencia")) or Decimal("0")
    if diferencia < 0:
        precio = f"Diferencia de precio: {euros(diferencia)} (a tu favor)."
    elif diferencia > 0:
        precio = f"Diferencia de precio: {euros(diferencia, signo=True)} (a tu cargo)."
    else:
        precio = "No hay diferencia de precio."
    nuevo = datos.get("sku_nuevo")
    nombre = f" ({datos['nombre_nuevo']})" if datos.get("nombre_nuevo") else ""
    cuerpo = (
        f"He tramitado la sustitución {datos['sustitucion']} del pedido "
        f"{datos.get('pedido', pedido)}: {datos.get('sku_original')} por {nuevo}{nombre}. {precio}"
    )
    if resultado.editado:
        return f"Un encargado ha revisado y ajustado el cambio antes de tramitarlo. {cuerpo}"
    if datos.get("repetido"):
        return f"Ese cambio ya estaba tramitado. {cuerpo}"
    return cuerpo


def _paso_encargado(tarea: Tarea, ctx: _Contexto) -> Paso:
    llamada = ctx.buscar(CONSULTAR_ENCARGADO)
    if llamada is None:
        if not ctx.hay(CONSULTAR_ENCARGADO):
            return _sin_herramienta(CONSULTAR_ENCARGADO)
        return Paso("actuar", CONSULTAR_ENCARGADO, {"pregunta": tarea.texto})
    resultado = llamada.resultado
    if resultado.tipo == "pendiente":
        return Paso("fin", texto="Tu pregunta está pendiente de respuesta del encargado.")
    if resultado.tipo == "rechazo":
        return Paso(
            "fin",
            texto=f"El encargado no ha respondido a tu pregunta. Motivo: {resultado.motivo_rechazo}.",
        )
    if resultado.tipo == "error":
        return Paso("fin", texto=_error("trasladar tu pregunta al encargado", resultado))
    return Paso("fin", texto=f"El encargado responde: {resultado.texto}")


def _paso_politica(tarea: Tarea, ctx: _Contexto) -> Paso:
    llamada = ctx.buscar(CONSULTAR_POLITICA)
    if llamada is None:
        if not ctx.hay(CONSULTAR_POLITICA):
            return _sin_herramienta(CONSULTAR_POLITICA)
        return Paso("leer", CONSULTAR_POLITICA, {})
    if llamada.resultado.tipo != "ok":
        return Paso("fin", texto=_error("consultar las condiciones de la tienda", llamada.resultado))
    return Paso("fin", texto=f"Estas son las condiciones de la tienda:\n{llamada.resultado.texto}")


PASOS: dict[str, Callable[[Tarea, _Contexto], Paso]] = {
    "estado": _paso_estado,
    "reembolso": _paso_reembolso,
    "cambio": _paso_cambio,
    "encargado": _paso_encargado,
    "politica": _paso_politica,
    "texto": lambda tarea, ctx: Paso("fin", texto=tarea.texto),
}


# ---------------------------------------------------------------- decisión del turno


def _id_llamada() -> str:
    return f"call_{uuid.uuid4().hex}"


def decidir(mensajes: Sequence[BaseMessage], herramientas: set[str] | None = None) -> AIMessage:
    """El siguiente mensaje del asistente para ``mensajes`` (función pura salvo los ids).

    ``herramientas``: nombres disponibles; ``None`` = todas (uso sin ``bind_tools``).
    """
    ultimo = max((i for i, m in enumerate(mensajes) if isinstance(m, HumanMessage)), default=-1)
    if ultimo < 0:
        return AIMessage(content=RESPUESTA_AYUDA)
    anteriores = list(mensajes[:ultimo])
    texto = _texto_de(mensajes[ultimo])
    ctx = _Contexto(_llamadas_desde(mensajes[ultimo + 1:]), herramientas)
    pasos = [PASOS[tarea.tipo](tarea, ctx) for tarea in _tareas(texto, anteriores)]

    # Primero todas las lecturas juntas; luego todas las operaciones en UN mensaje
    # (una sola revisión del encargado); al final, la respuesta.
    for tipo in ("leer", "actuar"):
        vistos: set[str] = set()
        llamadas = []
        for paso in pasos:
            if paso.tipo != tipo:
                continue
            clave = json.dumps([paso.nombre, paso.args], sort_keys=True)
            if clave in vistos:
                continue
            vistos.add(clave)
            llamadas.append(
                {"name": paso.nombre, "args": paso.args, "id": _id_llamada(), "type": "tool_call"}
            )
        if llamadas:
            return AIMessage(content="", tool_calls=llamadas)
    return AIMessage(content="\n\n".join(paso.texto for paso in pasos if paso.texto))


# ---------------------------------------------------------------- el modelo


def _nombres(herramientas: Any) -> set[str] | None:
    if herramientas is None:
        return None
    nombres = set()
    for herramienta in herramientas:
        if isinstance(herramienta, dict):
            funcion = herramienta.get("function") if "function" in herramienta else herramienta
            if isinstance(funcion, dict) and funcion.get("name"):
                nombres.add(str(funcion["name"]))
    return nombres


class ModeloOffline(BaseChatModel):
    """Modelo de chat determinista por reglas. NO es un LLM.

    Sirve para la demo y las pruebas sin clave de API: conduce las mismas herramientas
    que un LLM con llamadas reales (ids ``call_<uuid4>``) y responde en español con los
    datos que devuelven las herramientas, sin inventar números. Admite ``bind_tools``
    (lo llama ``create_agent``) y streaming (la respuesta final palabra a palabra).
    """

    @property
    def _llm_type(self) -> str:
        return "offline-reglas"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"modelo": "offline-reglas"}

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        # Solo se usan los nombres; tool_choice se ignora (las reglas deciden).
        formateadas = [convert_to_openai_tool(herramienta) for herramienta in tools]
        return self.bind(tools=formateadas, **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        mensaje = decidir(messages, _nombres(kwargs.get("tools")))
        return ChatResult(generations=[ChatGeneration(message=mensaje)])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        mensaje = decidir(messages, _nombres(kwargs.get("tools")))
        if mensaje.tool_calls:
            trozos = [
                {
                    "name": llamada["name"],
                    "args": json.dumps(llamada["args"], ensure_ascii=False),
                    "id": llamada["id"],
                    "index": indice,
                    "type": "tool_call_chunk",
                }
                for indice, llamada in enumerate(mensaje.tool_calls)
            ]
            yield ChatGenerationChunk(message=AIMessageChunk(content="", tool_call_chunks=trozos))
            return
        for palabra in re.findall(r"\S+\s*|\s+", str(mensaje.content)):
            trozo = ChatGenerationChunk(message=AIMessageChunk(content=palabra))
            if run_manager:
                run_manager.on_llm_new_token(palabra, chunk=trozo)
            yield trozo
