"""Ninguna sentencia que bloquea filas decide con lo que lee de otra tabla (issue 38).

En READ COMMITTED, un ``SELECT … FOR UPDATE`` (o ``FOR SHARE``, ``FOR NO KEY UPDATE``,
``FOR KEY SHARE``) que espera a otra transacción relee solo las filas que bloquea; sus
subconsultas, y las filas de un JOIN que no bloquea, siguen con la foto de antes de esperar
(docs/trampas.md, «Tras esperar a un FOR UPDATE, las subconsultas ven la foto vieja»). Lo que
decide (un 409, un «ya está cancelado») se lee en la sentencia siguiente al candado.

Esta prueba recorre cada texto SQL de ``agente/``, ``herramientas/`` y ``politicas/`` (las
constantes, también las que se arman con ``sql.SQL`` o una f-string) y señala cada sentencia
que bloquea y además lee otra tabla en una subconsulta o en un JOIN sin bloquear. Las que
no deciden nada con esa lectura van en ``PERMITIDAS`` con el porqué.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.apoyo.rutas import RAIZ

PAQUETES = ("agente", "herramientas", "politicas", "operaciones", "caja", "nucleo")

# Fichero::constante -> por qué lo que lee fuera de la fila bloqueada no decide nada.
PERMITIDAS = {
    "agente/notificaciones/cola_avisos.py::RECLAMAR_SQL": (
        "SKIP LOCKED: nunca espera a otra transacción, así que no hay foto de antes de una "
        "espera; «vigente» solo descarta avisos que ya no hacen falta (pausa decidida, contacto "
        "dado de baja, cliente ya en el chat) y equivocarse ahí es mandar o no un aviso de más"),
    "agente/servicio/aprobaciones/cola.py::SELECT_APROBACION_PARA_DECIDIR_SQL": (
        "el firmante (activo, rol y tiendas) no se serializa con la fila de la pausa: "
        "desactivarlo no toma este candado, así que leerlo en otra sentencia no cerraría "
        "ninguna carrera. Las firmas ya recogidas, que sí se serializan aquí, se leen después "
        "(SELECT_FIRMAS_SQL)"),
    "agente/servicio/decisiones/reclamos.py::SELECT_PARA_RECLAMAR_SQL": (
        "del encargado que la tiene solo sale su nombre, para el mensaje; quién la tiene "
        "(asignada_a, reclamada_hasta) es de la fila bloqueada"),
    "caja/estados_proveedor.py::BLOQUEAR_COBRO_SQL": (
        "del cobro solo se leen su pedido y su cambio, que no cambian nunca; lo que decide "
        "se lee de pedido y cambio, bloqueados, y en las sentencias siguientes"),
}

CANDADO = re.compile(r"\bFOR\s+(?:NO\s+KEY\s+UPDATE|KEY\s+SHARE|UPDATE|SHARE)\b", re.IGNORECASE)
_FICHA = re.compile(r"""
    (?P<cadena>'(?:[^']|'')*')
  | (?P<comentario>--[^\n]*)
  | (?P<marcador>%\(\w+\)[sbt])
  | (?P<palabra>[A-Za-z_][\w$]*(?:\.[A-Za-z_][\w$]*)?)
  | (?P<simbolo>[(),])
  | (?P<otro>\S)
""", re.VERBOSE)
# Lo que sigue a un nombre de tabla y no es su alias.
_NO_ALIAS = {"WHERE", "JOIN", "LEFT", "RIGHT", "INNER", "FULL", "CROSS", "NATURAL", "ON", "USING",
             "GROUP", "ORDER", "LIMIT", "OFFSET", "FOR", "UNION", "EXCEPT", "INTERSECT", "HAVING",
             "WINDOW", "RETURNING", "SET", "FETCH", "TABLESAMPLE"}
# Funciones con FROM dentro de sus paréntesis: ``extract(epoch FROM x)``.
_FROM_DE_FUNCION = {"EXTRACT", "SUBSTRING", "TRIM", "POSITION", "OVERLAY"}


def _fichas(texto: str) -> list[tuple[str, str, int]]:
    """(tipo, valor en mayúsculas, profundidad de paréntesis) de cada pieza del SQL."""
    fichas, profundidad = [], 0
    for m in _FICHA.finditer(texto):
        tipo, valor = m.lastgroup, m.group()
        if tipo == "comentario":
            continue
        if valor == ")":
            profundidad -= 1
        fichas.append((tipo, valor.upper(), profundidad))
        if valor == "(":
            profundidad += 1
    return fichas


def _ambito(fichas, i: int) -> tuple[int, int]:
    """El tramo [inicio, fin) de los paréntesis que encierran la ficha ``i`` (o todo el texto)."""
    nivel = fichas[i][2]
    inicio = i
    while inicio > 0 and not (fichas[inicio - 1][1] == "(" and fichas[inicio - 1][2] == nivel - 1):
        inicio -= 1
    fin = i
    while fin < len(fichas) and not (fichas[fin][1] == ")" and fichas[fin][2] == nivel - 1):
        fin += 1
    return inicio, fin


def _tablas(fichas, inicio: int, fin: int) -> list[tuple[str, str, int]]:
    """(tabla, alias, profundidad relativa) de cada tabla que se lee en el tramo."""
    base, tablas = fichas[inicio][2], []
    k = inicio
    while k < fin:
        _, valor, nivel = fichas[k]
        anterior = fichas[k - 1][1] if k > 0 else ""
        if not (valor == "JOIN" or (valor == "FROM" and anterior != "DISTINCT")):
            k += 1
            continue
        abre = _ambito(fichas, k)[0] - 1
        if valor == "FROM" and abre >= 1 and fichas[abre - 1][1] in _FROM_DE_FUNCION:
            k += 1
            continue
        k += 1
        while k < fin:  # una lista «FROM a x, b y»
            if fichas[k][1] == "LATERAL":
                k += 1
            tipo, nombre, _ = fichas[k]
            if tipo == "palabra" and not (k + 1 < fin and fichas[k + 1][1] == "("):
                alias = nombre
                j = k + 1
                if j < fin and fichas[j][1] == "AS":
                    j += 1
                if j < fin and fichas[j][0] == "palabra" and fichas[j][1] not in _NO_ALIAS:
                    alias = fichas[j][1]
                    j += 1
                tablas.append((nombre.lower(), alias.lower(), nivel - base))
                k = j
            else:  # una subconsulta o una función (unnest, generate_series): se sigue leyendo por dentro
                break
            if not (k < fin and fichas[k][1] == "," and fichas[k][2] == nivel):
                break
            k += 1
    return tablas


def lecturas_fuera_del_candado(texto: str) -> list[str]:
    """Lo que una sentencia que bloquea lee de otras tablas con la foto de antes de esperar."""
    fichas = _fichas(texto)
    hallazgos = []
    for i, (_, valor, _) in enumerate(fichas):
        if valor != "FOR" or not CANDADO.match(" ".join(v for _, v, _ in fichas[i:i + 4])):
            continue
        inicio, fin = _ambito(fichas, i)
        j = i + 1
        while j < fin and fichas[j][1] in ("NO", "KEY", "UPDATE", "SHARE"):
            j += 1
        de = set()
        if j < fin and fichas[j][1] == "OF":
            j += 1
            while j < fin and fichas[j][0] == "palabra":
                de.add(fichas[j][1].lower())
                j += 2 if j + 1 < fin and fichas[j + 1][1] == "," else 1
        for tabla, alias, nivel in _tablas(fichas, inicio, i):
            if nivel > 0:
                hallazgos.append(f"subconsulta de {tabla}")
            elif de and not ({tabla, alias} & de):
                hallazgos.append(f"JOIN sin bloquear de {tabla}")
    return sorted(set(hallazgos))


def _texto(nodo: ast.AST) -> str | None:
    """El SQL de una asignación: un literal, una f-string, ``sql.SQL("...")`` o una suma de ellos."""
    if isinstance(nodo, ast.Constant) and isinstance(nodo.value, str):
        return nodo.value
    if isinstance(nodo, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else " x " for v in nodo.values)
    if isinstance(nodo, ast.Call) and getattr(nodo.func, "attr", None) == "SQL" and nodo.args:
        return _texto(nodo.args[0])
    if isinstance(nodo, ast.BinOp) and isinstance(nodo.op, ast.Add):
        return f"{_texto(nodo.left) or ' x '}{_texto(nodo.right) or ' x '}"
    return None


def sentencias_que_bloquean(raiz: Path = RAIZ) -> dict[str, str]:
    """``fichero::NOMBRE -> SQL`` de cada texto asignado a un nombre que bloquea filas."""
    encontradas = {}
    for paquete in PAQUETES:
        for fichero in sorted((raiz / paquete).rglob("*.py")):
            for nodo in ast.walk(ast.parse(fichero.read_text(encoding="utf-8"))):
                if not isinstance(nodo, ast.Assign | ast.AnnAssign) or nodo.value is None:
                    continue
                texto = _texto(nodo.value)
                if texto is None or not CANDADO.search(texto) or "SELECT" not in texto.upper():
                    continue
                destinos = nodo.targets if isinstance(nodo, ast.Assign) else [nodo.target]
                for destino in destinos:
                    if isinstance(destino, ast.Name):
                        encontradas[f"{fichero.relative_to(raiz)}::{destino.id}"] = texto
    return encontradas


# La sentencia de la ingesta antes del arreglo: 9 de 60 cancelaciones por el chat a la vez que
# la tienda marcaba «enviado» acabaron canceladas, reembolsadas y enviadas.
PEDIDO_SQL_DE_ANTES = """
SELECT p.tienda, p.estado, p.cliente_id, p.fecha, p.enviado_en, p.entregado_en,
       EXISTS (SELECT 1 FROM efectos e WHERE e.pedido_id = p.id) AS con_efectos,
       EXISTS (SELECT 1 FROM cancelaciones c WHERE c.pedido_id = p.id) AS cancelado_por_chat,
       r.version, r.huella
FROM pedidos p
LEFT JOIN ingesta_registros r ON r.tipo = 'pedido' AND r.tienda = p.tienda AND r.id = p.id
WHERE p.id = %(id)s FOR UPDATE OF p
"""


def test_ninguna_sentencia_que_bloquea_decide_con_lo_que_lee_de_otra_tabla():
    sentencias = sentencias_que_bloquean()
    assert len(sentencias) >= 10, "se encuentran muy pocas sentencias con FOR UPDATE: ¿cambió la forma del código?"
    sin_permiso = {nombre: hallado for nombre, texto in sentencias.items()
                   if (hallado := lecturas_fuera_del_candado(texto)) and nombre not in PERMITIDAS}
    assert sin_permiso == {}, (
        "léelo en la sentencia siguiente al candado (docs/trampas.md) o, si no decide nada, "
        "añádelo a PERMITIDAS con el porqué")


def test_cada_permiso_tiene_su_motivo_y_sigue_haciendo_falta():
    sentencias = sentencias_que_bloquean()
    sobran = [n for n in PERMITIDAS if n not in sentencias or not lecturas_fuera_del_candado(sentencias[n])]
    assert sobran == []
    assert all(len(motivo) > 40 for motivo in PERMITIDAS.values())


def test_la_sentencia_de_la_ingesta_de_antes_se_detecta():
    assert lecturas_fuera_del_candado(PEDIDO_SQL_DE_ANTES) == [
        "JOIN sin bloquear de ingesta_registros", "subconsulta de cancelaciones", "subconsulta de efectos"]


@pytest.mark.parametrize(("sql", "esperado"), [
    # Solo la fila bloqueada: nada que señalar.
    ("SELECT id, estado FROM pedidos WHERE id = %(id)s FOR UPDATE", []),
    # Las dos tablas del JOIN bloqueadas, con alias.
    ("SELECT s.id FROM pedidos p JOIN sustituciones s ON s.pedido_id = p.id WHERE s.id = 1 FOR UPDATE OF p, s", []),
    # Sin OF se bloquean todas las del FROM.
    ("SELECT a.id FROM avisos a, contactos c WHERE c.id = a.contacto FOR NO KEY UPDATE", []),
    # Un JOIN que no se bloquea.
    ("SELECT p.id FROM cobros c JOIN pedidos p ON p.id = c.pedido_id FOR UPDATE OF p", ["JOIN sin bloquear de cobros"]),
    # Una subconsulta en el WHERE, con FOR SHARE.
    ("SELECT sku FROM productos WHERE NOT EXISTS (SELECT 1 FROM vetados v WHERE v.sku = productos.sku) FOR SHARE",
     ["subconsulta de vetados"]),
    # El candado dentro de una subconsulta: lo de fuera no es suyo, lo de dentro sí.
    ("UPDATE r SET x = 1 WHERE id IN (SELECT id FROM r WHERE e = 'p' FOR UPDATE SKIP LOCKED) "
     "AND EXISTS (SELECT 1 FROM otra)", []),
    ("WITH e AS (SELECT s.id, EXISTS (SELECT 1 FROM bajas b) AS v FROM avisos s FOR UPDATE OF s) "
     "UPDATE avisos SET n = 1 FROM e", ["subconsulta de bajas"]),
    # Funciones en el FROM y FROM dentro de extract: no son tablas.
    ("SELECT extract(epoch FROM p.fecha) FROM pedidos p CROSS JOIN LATERAL generate_series(1, 2) AS g(n) "
     "WHERE p.id = 1 FOR UPDATE OF p", []),
    # Un texto entre comillas y un comentario no cuentan.
    ("SELECT id FROM pedidos -- FROM otra\nWHERE nota = 'FROM otra' FOR UPDATE", []),
])
def test_el_detector_distingue_lo_que_se_lee_fuera_del_candado(sql, esperado):
    assert lecturas_fuera_del_candado(sql) == esperado
