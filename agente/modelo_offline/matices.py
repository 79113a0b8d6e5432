"""Los matices del mensaje que cambian lo que se pide: negar, retractarse, cuántas unidades, qué artículo.

Lo que vale para cualquier operación está aquí; lo propio de cada una (otras maneras de
pedirla, maneras de decir que ya no la quiere) lo declara su módulo en ``FRASES`` (un
``Frases``) y ``lectura`` los junta. Todo se aplica al texto normalizado (``texto``).

- Negar una operación: «sin devolverlo», «no quiero el reembolso», «en vez de cambiarla»;
  el negador va justo antes de la palabra que la reconoce, y esa palabra deja de contar.
- Retractarse en el mismo mensaje: «..., bueno no, mejor me lo quedo», «... al final no»;
  anula la cláusula donde está (no las demás operaciones del mensaje).
- Unidades: «una sartén», «1 sartén», «una de las sartenes» limitan las unidades de esa línea.
- Artículo nombrado: «devolver la jarra» nombra «jarra»; si el pedido no la tiene, se pregunta.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from agente.modelo_offline.texto import PALABRAS_VACIAS, coinciden, normalizar, palabras, puntuacion

__all__ = [
    "Frases",
    "articulo_nombrado",
    "esta_en",
    "negada",
    "no_esta_en_el_pedido",
    "retirada",
    "retractadas",
    "unidades_nombradas",
]


@dataclass(frozen=True)
class Frases:
    """Lo que el modelo offline lee de una operación además del patrón que declara su operación.

    ``tambien``: otras maneras de pedirla; ``renuncia``: maneras de decir que ya no la quiere
    (anulan solo una cláusula de esta operación). Expresiones sobre texto normalizado; vacía = ninguna.
    """

    intencion: str
    tambien: str = ""
    renuncia: str = ""

    def __post_init__(self) -> None:
        for patron in (self.tambien, self.renuncia):
            re.compile(patron)


# Justo antes de la palabra de la operación: «sin», «ni», «en vez de», «no (quiero|hace falta) que me».
# «¿Por qué no me lo devolvéis?» reclama, no niega.
RE_NEGADOR = re.compile(
    r"(?:\bsin|\bni|\bnada de|\ben (?:vez|lugar) del?|(?<!por que )(?<!porque )\bno"
    r"(?:\s+(?:quiero|queremos|quiere|necesito|necesitamos|hace falta|hay que|me|nos|lo|la|los|las|te|os|le|les|que))*)"
    r"\s+(?:(?:el|la|los|las|un|una|que|me|nos|lo|se|ningun|ninguna|mi|mis)\s+){0,2}$"
)
# «bueno no», «al final no», «mejor no», «pensándolo bien, no» seguido de pausa o de lo que se
# hace en su lugar; «al final no me ha llegado» no es retractarse.
RE_RETRACTA = re.compile(
    r"\b(?:bueno|pues|al final|mejor|pensandolo (?:bien|mejor)|de hecho)\W{0,3}no\b"
    r"(?=\W*(?:$|[,.;:!?]|mejor\b|me l[oa]s? quedo|quiero\b|hace falta|lo necesito))"
    # «me equivoqué de portal, es el 7» corrige un dato; «me equivoqué» a secas retira.
    r"|\b(?:olvida(?:d)?lo|dejalo (?:estar|correr)|no hagas nada|me he liado|me equivoque(?!\s+de\b))\b"
    r"|\bno,? espera\b"
)

NUMEROS = {"un": 1, "una": 1, "uno": 1, "dos": 2, "tres": 3, "cuatro": 4, "cinco": 5, "seis": 6,
           "siete": 7, "ocho": 8, "nueve": 9, "diez": 10}
RE_CANTIDAD = re.compile(
    r"\b(\d{1,3}|" + "|".join(NUMEROS) + r")\s+(?:(?:de\s+)?(?:las|los|mis|tus)\s+|sol[oa]\s+)?([a-z0-9]+)"
)
# Tras la palabra de la operación: «devolver la jarra», «reembolso de las dos toallas».
RE_ARTICULO = re.compile(
    r"\W*(?:(?:me|nos|te|os|se|lo|la)\s+)?(?:del?\s+)?"
    r"(?:(?:el|la|los|las|un|una|unos|unas|mi|mis|otr[oa]s?|\d{1,3}|" + "|".join(NUMEROS) + r")\s+)+"
    r"(?:de\s+(?:las|los|mis)\s+)?([a-z]{3,})"
)
# Lo que va detrás de un artículo y no es un producto.
NO_PRODUCTOS = frozenset({
    "pedido", "pedidos", "dinero", "pasta", "importe", "compra", "total", "resto", "todo", "paquete", "envio",
    "producto", "productos", "articulo", "articulos", "cosa", "cosas", "vale", "reembolso", "devolucion",
    "pago", "parte", "mitad", "cargo", "precio", "euros", "euro", "eur", "del", "que", "con", "por",
    "para", "sin", "dia", "dias", "semana", "vez", "mismo", "misma", "nuevo", "nueva",
})


def negada(normal: str, inicio: int) -> bool:
    """¿La palabra de una operación que empieza en ``inicio`` va negada («sin devolverlo»)?"""
    return bool(RE_NEGADOR.search(normal[max(0, inicio - 60):inicio]))


def retractadas(normal: str, clausulas: Sequence[tuple[str, int, int]], renuncias: dict[str, str]) -> set[int]:
    """Los índices de las ``clausulas`` (intención, desde, hasta) que el cliente retira en el mensaje.

    Una retractación general anula la cláusula donde empieza y las que empiezan dentro de ella
    («al final no quiero devolverla»); la ``renuncia`` de una operación, solo sus cláusulas.
    """
    anuladas: set[int] = set()
    for i, (tipo, desde, hasta) in enumerate(clausulas):
        for encontrada in RE_RETRACTA.finditer(normal, desde, hasta):
            anuladas.add(i)
            anuladas.update(j for j, (_, d, _h) in enumerate(clausulas) if encontrada.start() <= d < encontrada.end())
        propia = renuncias.get(tipo)
        if propia and re.search(propia, normal[desde:hasta]):
            anuladas.add(i)
    return anuladas


def retirada(pedido: str | None) -> str:
    del_pedido = f" del pedido {pedido}" if pedido else ""
    return (f"De acuerdo: no he tramitado nada{del_pedido}, todo sigue como estaba. "
            "Si cambias de idea, escríbeme cuando quieras.")


def unidades_nombradas(texto: str, nombre_producto: str) -> int | None:
    """Las unidades que ``texto`` pide de un producto («una sartén», «2 toallas»); None si no lo dice."""
    for encontrada in RE_CANTIDAD.finditer(normalizar(texto)):
        cuantas, palabra = encontrada.groups()
        if palabra in ("unidad", "unidades") or (palabra not in PALABRAS_VACIAS
                                                 and puntuacion(nombre_producto, palabra) > 0):
            return int(cuantas) if cuantas.isdigit() else NUMEROS[cuantas]
    return None


def articulo_nombrado(texto: str, patron: re.Pattern[str]) -> str | None:
    """El producto que nombra ``texto`` justo tras la palabra de la operación («la jarra» -> «jarra»).

    None si no nombra ninguno («devolver el pedido», «reembolsar 30 euros») o si es una palabra
    que no distingue productos («el juego»).
    """
    normal = normalizar(texto)
    for marca in patron.finditer(normal):
        encontrado = RE_ARTICULO.match(normal, marca.end())
        if encontrado and encontrado.group(1) not in NO_PRODUCTOS | PALABRAS_VACIAS:
            return texto[encontrado.start(1):encontrado.end(1)]
    return None


def esta_en(palabra: str, lineas: Sequence[dict]) -> bool:
    """¿Alguna línea se llama como ``palabra`` (o la línea es su SKU)?"""
    return any(coinciden(normalizar(palabra), p) for linea in lineas
               for p in palabras(f"{linea.get('nombre', '')} {linea.get('sku', '')}"))


def no_esta_en_el_pedido(pedido: str | None, palabra: str, lineas: Sequence[dict]) -> str:
    """La pregunta cuando el cliente nombra un artículo que el pedido no tiene: no se mueve nada."""
    contiene = "; ".join(f"{linea.get('unidades', 1)} × {linea.get('nombre')}" for linea in lineas)
    return f"En el pedido {pedido} no veo «{palabra}». ¿A qué artículo te refieres? Contiene: {contiene}."
