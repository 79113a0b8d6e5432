"""El bench sigue corriendo sobre el producto de hoy.

``make bench`` no entra en ``make test`` (tarda minutos) y por eso se rompió dos veces
sin que nadie lo viera: el pool trazado dejó de aceptar la espera del pool y el EXPLAIN
de la bandeja siguió usando el parámetro de una sola tienda. Aquí corren, en pequeño,
las dos partes que tocan el interior del producto (fábrica del servicio y SQL de la cola).
"""

from __future__ import annotations

from bench import crecimiento, turnos


def test_el_recuento_de_sentencias_corre_con_la_fabrica_del_servicio(bd_url):
    r = turnos.contar(bd_url, conversaciones=1, calentamiento=0)
    for caso in ("B", "C"):
        for escenario in turnos.ESCENARIOS:
            assert r[caso][escenario]["sentencias_psycopg"] > 0, (caso, escenario)
    # El producto hace algo más que el framework pelado en cada turno (candado, cola...).
    assert r["C"]["consulta"]["sentencias_psycopg"] > r["B"]["consulta"]["sentencias_psycopg"]


def test_el_explain_de_la_bandeja_usa_la_sql_de_la_cola(bd_url):
    plan = crecimiento._explain(bd_url)
    assert "aprobaciones_pendientes" in plan
