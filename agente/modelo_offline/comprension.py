"""Lo que ayuda a entender un mensaje escrito como se escribe en un chat, para cualquier operación.

- ``corregir``: abreviaturas y faltas habituales («q», «xq», «kiero», «x» por «por», «xfa»)
  se leen como la palabra que son (el resto del modelo ya solo ve la forma correcta).
- ``cortes``: dónde empieza cada petición de un mensaje con varias: en el último separador
  («,», «;», «.», «y», «además», «de paso») antes de la palabra que la reconoce, para que
  «y la sartén del P-2 os la devuelvo» lleve su producto y su pedido.
- ``de_respaldo``: lo que va tras «o si no», «si no se puede»: solo se haría si lo primero
  no fuera posible, así que no es una petición más.
- ``trozos_por_pedido``: una petición que nombra varios pedidos («cancela el P-1 y el P-2»)
  es una por pedido.
- ``queja_sin_peticion``: «tengo un problema», «ha venido con un defecto»: no dice qué
  quiere; se pregunta antes de hacer nada.
"""

from __future__ import annotations

import re

from agente.modelo_offline.texto import RE_PEDIDO, normalizar

__all__ = ["RE_NO", "RE_SI", "corregir", "cortes", "de_respaldo", "queja_sin_peticion", "trozos_por_pedido"]

# Palabra del chat -> palabra escrita (en minúsculas; se respeta la mayúscula inicial).
_CHAT = {
    "q": "que", "k": "que", "ke": "que", "xq": "porque", "pq": "porque", "porq": "porque",
    "x": "por", "xa": "para", "pa": "para", "tb": "también", "tmb": "también",
    "xfa": "por favor", "porfa": "por favor", "plis": "por favor", "pls": "por favor",
    "kiero": "quiero", "qiero": "quiero", "kieres": "quieres", "kero": "quiero",
    "pedio": "pedido", "pdido": "pedido", "ola": "hola", "nose": "no sé",
    "ba": "va", "komo": "como", "cmo": "como", "dnd": "donde", "d": "de", "toy": "estoy",
    "aunq": "aunque", "tng": "tengo", "tngo": "tengo", "to": "todo", "na": "nada",
}
_RE_PALABRA = re.compile(r"\b[A-Za-zñÑ]+\b")
# Letras que se confunden al escribir deprisa (funsiona, vajiya, rrota): se corrigen solo
# dentro de palabras conocidas por su raíz.
_FALTAS = ((re.compile(r"\bfunsion", re.IGNORECASE), "funcion"), (re.compile(r"iya\b", re.IGNORECASE), "illa"),
           (re.compile(r"\brr", re.IGNORECASE), "r"))

SEPARADOR = re.compile(r"[,;:.!?]+\s*|\s(?:y|e|ademas|tambien|de paso|luego|despues)\s")
RESPALDO = re.compile(r"\b(?:o si no|o sino|y si no|si no se puede|si no es posible|o en su defecto|o bien)\b")
QUEJA = re.compile(
    r"\b(?:problema\w*|queja\w*|content[oa]s?|defect\w*|fatal|mal estado|vino mal|llego mal|ha venido mal|"
    r"no funciona\w*|no me gusta\w*|tengo un tema|incidencia\w*)\b"
)

# La respuesta a una propuesta que espera un «sí» o un «no» (texto normalizado).
RE_SI = re.compile(r"^\W*(?:si|vale|de acuerdo|confirmo|adelante|hazlo|perfecto|ok|okey|claro|venga|dale|genial|"
                   r"por supuesto|eso es|esa|ese|me parece bien)\b")
RE_NO = re.compile(r"^\W*(?:no|mejor no|dejalo|olvidalo|cancela\w*|nada)\b"
                   r"|\b(?:casi que no|pues no|mejor no|lo dejo (?:como esta|asi|estar)|dejalo (?:como esta|asi|estar)|"
                   r"no me interesa|no gracias)\b")


def corregir(texto: str) -> str:
    def cambiar(encontrada: re.Match[str]) -> str:
        palabra = encontrada.group(0)
        nueva = _CHAT.get(palabra.lower())
        if nueva is None:
            return palabra
        return nueva[0].upper() + nueva[1:] if palabra[0].isupper() else nueva
    texto = _RE_PALABRA.sub(cambiar, texto)
    for patron, sustituto in _FALTAS:
        texto = patron.sub(sustituto, texto)
    return texto


def cortes(normal: str, fin_anterior: int, inicio: int) -> tuple[int, int]:
    """(fin de la petición anterior, inicio de esta): el último separador entre las dos marcas."""
    ultimo = None
    for encontrado in SEPARADOR.finditer(normal, fin_anterior, inicio):
        ultimo = encontrado
    if ultimo is None:
        return inicio, inicio
    return ultimo.start(), ultimo.end()


def de_respaldo(normal: str, desde: int, marca: int) -> bool:
    """¿La petición que empieza en ``desde`` (su palabra en ``marca``) va tras «o si no»?"""
    return bool(RESPALDO.search(normal, max(0, desde - 40), marca + 1))


def trozos_por_pedido(texto: str) -> list[tuple[str, str]]:
    """[(pedido, fragmento)]: el fragmento partido en el último separador antes de cada pedido."""
    encontrados = list(RE_PEDIDO.finditer(texto))
    if len({m.group(0).upper() for m in encontrados}) < 2:
        return []
    normal = normalizar(texto)
    trozos, desde = [], 0
    for anterior, siguiente in zip(encontrados, encontrados[1:], strict=False):
        if siguiente.group(0).upper() == anterior.group(0).upper():
            continue
        fin, comienzo = cortes(normal, anterior.end(), siguiente.start())
        if fin == comienzo:  # sin separador entre los dos pedidos: no se parte
            return []
        trozos.append((anterior.group(0).upper(), texto[desde:fin]))
        desde = comienzo
    trozos.append((encontrados[-1].group(0).upper(), texto[desde:]))
    return trozos


def queja_sin_peticion(normal: str) -> bool:
    return bool(QUEJA.search(normal))
