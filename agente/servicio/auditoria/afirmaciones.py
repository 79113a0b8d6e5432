"""Lo que un mensaje del agente afirma que ya pasó: referencias y efectos hechos.

Contrato: ``extraer(texto)`` lee el texto que vio el cliente (un mensaje del agente) y
devuelve sus ``Afirmacion``: cada número de operación que nombra (``RE-``, ``SU-``,
``CA-``, ``RV-``, ``VA-``, ``CD-``, ``CO-``) y cada efecto que dice haber hecho en primera
persona («he tramitado el reembolso…», «te he devuelto 24,90 EUR», «he cancelado tu
pedido…», «he cambiado la dirección…», «te he dado un vale…», «te devolvemos…»), con los
importes, los números y el pedido de su frase. Comprobarlas contra la base es cosa de
``verdad``; aquí no hay SQL.

Trampas (cero falsos positivos con los textos reales del modelo offline, las herramientas
y los avisos):

- Una promesa no es un efecto: los futuros («te reembolsaremos») no casan con ningún verbo,
  y un verbo con una condición delante en la frase («cuando lo recibas… te reembolsamos»,
  «en cuanto un encargado lo apruebe…») o detrás en su misma cláusula no cuenta.
- Una pregunta («¿quieres que te devuelva…?») y un verbo negado («no he cancelado nada»,
  «todavía no te hemos devuelto») no afirman nada.
- Lo que escribe una persona y el agente solo cita (la nota del encargado, «El encargado
  responde: …») no es del agente: se corta.
- «Ya se han reembolsado 49,80 EUR» (el estado del pedido, quizá de otra conversación) es
  impersonal: no es un efecto de este agente y no se lee.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from decimal import Decimal

from nucleo import dinero
from nucleo.errores import ImporteNoValido

__all__ = ["PREFIJOS", "RE_CODIGO", "Afirmacion", "extraer", "plegar"]

# Prefijo del número -> operación (sql/003, 007, 016, 017, 018, 019: «RE-000012»; los vales,
# «VA-» y diez cifras al azar).
PREFIJOS = {"RE": "reembolso", "SU": "cambio", "CA": "cancelacion", "RV": "reenvio",
            "VA": "vale", "CD": "direccion", "CO": "cobro"}
RE_CODIGO = re.compile(r"\b(?:RE|SU|CA|RV|VA|CD|CO)-\d{6,10}\b")
RE_PEDIDO = re.compile(r"\bP-\d{8}-\d{4}\b")
# «24,90 EUR», «1.234,50 €», «+5,00 EUR», «30 euros»: el signo no cuenta (una diferencia).
RE_IMPORTE = re.compile(r"[+-]?(\d{1,3}(?:\.\d{3})+|\d+)(?:,(\d{1,2}))?\s*(?:EUR\b|€|euros?\b)", re.IGNORECASE)
# Lo que cita el agente de una persona: desde aquí hasta el final no es suyo.
RE_CITA = re.compile(r"\n\s*Nota del encargado:|\bEl encargado responde:", re.IGNORECASE)
# El motivo que escribió un encargado al rechazar («Motivo: …»): suyo, no del agente.
RE_MOTIVO = re.compile(r"^Motivo:", re.IGNORECASE)
# Frases: por . ! ? seguidos de espacio y mayúscula (no «24,90 EUR.» a media frase) o saltos.
RE_FRASE = re.compile(r"(?<=[.!?])\s+(?=[¿¡«(A-ZÁÉÍÓÚÑ])|\n+")

# Los verbos de un efecto hecho, sobre el texto plegado (minúsculas y sin tildes).
# (patrón, operación si el verbo la fija o None si la dice su complemento, nivel); «cambio?»:
# la del complemento y, si no dice ninguna, un cambio de producto («he cambiado la cafetera…»).
# nivel «hecho»: el dinero ya se movió (emitido o confirmado); «existe»: la operación consta.
_PRIMERA = r"\b(?:ya\s+)?(?:(?:te|le|os|les|se|lo|la|se lo|te lo|te la)\s+)?(?:ya\s+)?(?:he|hemos)\s+"
VERBOS: tuple[tuple[re.Pattern[str], str | None, str], ...] = tuple(
    (re.compile(patron), operacion, nivel) for patron, operacion, nivel in (
        (_PRIMERA + r"(?:reembolsado|devuelto|abonado|ingresado)\b", "reembolso", "hecho"),
        (_PRIMERA + r"cobrado\b", "cobro", "hecho"),
        (_PRIMERA + r"cancelado\b", "cancelacion", "existe"),
        (_PRIMERA + r"(?:reenviado|vuelto a enviar)\b", "reenvio", "existe"),
        (_PRIMERA + r"cambiado\b", "cambio?", "existe"),
        (_PRIMERA + r"(?:tramitado|procesado|gestionado|emitido|realizado|registrado|hecho|"
                    r"efectuado|completado|dado|generado|creado|enviado|aplicado)\b", None, "existe"),
        (r"\bte\s+(?:devolvemos|reembolsamos|abonamos|devuelvo)\b",
         "reembolso", "existe"),
        (r"\bte\s+(?:enviamos|mandamos)\s+(?:otra vez|de nuevo)\b", "reenvio", "existe"),
        (r"\bya\s+esta\s+hech[oa]\s+(?:el|la)\s+(?=reembolso|devolucion)", "reembolso", "hecho"),
        (r"\bya\s+esta\s+hech[oa]\s+(?:el|la)\s+(?=cambio|sustitucion)", "cambio", "hecho"),
        (r"\bya\s+estaba\s+(?:tramitad[oa]|emitid[oa]|hech[oa]|cancelad[oa])\b", None, "existe"),
    )
)
# El complemento dice la operación («he tramitado el reembolso»): la primera que aparece.
OBJETOS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(patron), operacion) for patron, operacion in (
        (r"\bdireccion\b", "direccion"),
        (r"\b(?:reembolso|devolucion|dinero|importe)\b", "reembolso"),
        (r"\b(?:sustitucion|cambio)\b", "cambio"),
        (r"\bcancelacion\b", "cancelacion"),
        (r"\breenvio\b", "reenvio"),
        (r"\bvale\b", "vale"),
        (r"\bcobro\b", "cobro"),
    )
)
# Una condición o una posibilidad delante del verbo (o detrás, en su cláusula): no hay efecto.
RE_CONDICION = re.compile(
    r"\b(?:si\b(?!\s*[,.!:])|cuando|en cuanto|una vez|tan pronto|hasta que|para que|antes de que|puedo|podemos|"
    r"puedes|podria|podriamos|quieres|prefieres|te parece|deberia|tendria|habria|quiza|quizas|"
    r"dijimos|dije|dices|dice)\b"
)
RE_NEGACION = re.compile(r"\b(?:no|nunca|todavia no|aun no|tampoco|ni)\s+(?:\w+\s+){0,2}$")
RE_FIN_CLAUSULA = re.compile(r"[,;:(]|\s(?:pero|aunque|y)\s")
# «No encuentro el reembolso RE-…»: nombrar un número para decir que no consta no lo afirma.
RE_NO_CONSTA = re.compile(r"\bno\s+(?:\w+\s+)?(?:encuentro|existe|consta|tengo|veo|aparece|figura)\b")


@dataclass(frozen=True)
class Afirmacion:
    """Una afirmación de un mensaje.

    ``tipo``: «referencia» (nombra un número: debe existir en su conversación) o «efecto»
    (dice que algo se hizo: ``operacion`` y ``nivel``, «hecho» o «existe»). ``codigos``,
    ``importes`` (sin signo) y ``pedido`` son los de su frase; ``frase``, la frase tal cual.
    """

    tipo: str
    frase: str
    operacion: str | None = None
    nivel: str = "existe"
    codigos: tuple[str, ...] = ()
    importes: tuple[Decimal, ...] = ()
    pedido: str | None = None


def plegar(texto: str) -> str:
    """Minúsculas y sin tildes, con la MISMA longitud (los índices valen en los dos)."""
    return "".join(unicodedata.normalize("NFD", c)[0] for c in texto.lower())


def _importes(frase: str) -> tuple[Decimal, ...]:
    encontrados = []
    for m in RE_IMPORTE.finditer(frase):
        entero, decimales = m.group(1).replace(".", ""), m.group(2) or "0"
        try:
            encontrados.append(abs(dinero.diferencia(f"{entero}.{decimales}")))
        except ImporteNoValido:
            continue
    return tuple(encontrados)


def _preguntas(frase: str) -> list[tuple[int, int]]:
    """Los tramos de ``frase`` que son pregunta: de «¿» a «?»; sin «¿» (un modelo que no lo
    escribe), la última cláusula de una frase que acaba en «?»."""
    tramos = [(m.start(), m.end()) for m in re.finditer(r"¿[^?]*\??", frase)]
    if not tramos and frase.rstrip(" .»)").endswith("?"):
        cortes = [m.end() for m in re.finditer(r"[,;:]", frase)]
        tramos.append((cortes[-1] if cortes else 0, len(frase)))
    return tramos


def _en(tramos: list[tuple[int, int]], posicion: int) -> bool:
    return any(inicio <= posicion < fin for inicio, fin in tramos)


def _cuenta(plegada: str, inicio: int, fin: int) -> bool:
    """¿El verbo en ``plegada[inicio:fin]`` afirma algo? Ni negado ni bajo una condición."""
    if RE_NEGACION.search(plegada[:inicio]) or RE_CONDICION.search(plegada[:inicio]):
        return False
    resto = plegada[fin:]
    corte = RE_FIN_CLAUSULA.search(resto)
    return not RE_CONDICION.search(resto[:corte.start()] if corte else resto)


def _operacion(plegada: str, fin: int, fija: str | None) -> str | None:
    if fija is not None and not fija.endswith("?"):
        return fija
    complemento = plegada[fin:fin + 60]
    encontradas = [(m.start(), op) for patron, op in OBJETOS if (m := patron.search(complemento))]
    if encontradas:
        return min(encontradas)[1]
    return fija.removesuffix("?") if fija else None


def _de_frase(frase: str) -> list[Afirmacion]:
    plegada = plegar(frase)
    codigos = tuple(dict.fromkeys(RE_CODIGO.findall(frase)))
    pedido = m.group(0) if (m := RE_PEDIDO.search(frase)) else None
    preguntas = _preguntas(frase)
    afirmaciones = []
    if not RE_NO_CONSTA.search(plegada):
        afirmaciones += [Afirmacion(tipo="referencia", frase=frase, codigos=(m.group(0),))
                         for m in RE_CODIGO.finditer(frase) if not _en(preguntas, m.start())]
    importes = _importes(frase)
    vistas: set[tuple[str, str]] = set()
    for patron, fija, nivel in VERBOS:
        for m in patron.finditer(plegada):
            operacion = _operacion(plegada, m.end(), fija)
            if (operacion is None or (operacion, nivel) in vistas or _en(preguntas, m.start())
                    or not _cuenta(plegada, m.start(), m.end())):
                continue
            vistas.add((operacion, nivel))
            afirmaciones.append(Afirmacion(
                tipo="efecto", frase=frase, operacion=operacion, nivel=nivel,
                codigos=codigos, importes=importes, pedido=pedido,
            ))
    return afirmaciones


def extraer(texto: str) -> list[Afirmacion]:
    """Las afirmaciones del mensaje ``texto``, en orden; un número nombrado dos veces, una."""
    propio = RE_CITA.split(unicodedata.normalize("NFC", texto or ""), maxsplit=1)[0]
    afirmaciones, nombrados = [], set()
    for frase in RE_FRASE.split(propio):
        if RE_MOTIVO.match(frase.strip()):
            continue
        for afirmacion in _de_frase(frase.strip()):
            if afirmacion.tipo == "referencia":
                if afirmacion.codigos[0] in nombrados:
                    continue
                nombrados.add(afirmacion.codigos[0])
            afirmaciones.append(afirmacion)
    return afirmaciones
