"""Retención de checkpoints (``agente.retencion.limpiar``) contra PostgreSQL real."""

from __future__ import annotations

import psycopg
import pytest
import typer
from psycopg import sql
from typer.testing import CliRunner

from agente.bd.pool import KWARGS_CONEXION
from agente.cli.mantenimiento import limpiar as orden_limpiar
from agente.retencion import limpiar
from agente.servicio.fabrica import crear_servicio
from nucleo.claves_candado import CANDADO_RETENCION, ESPACIO_HILOS
from tests.apoyo.fabricas import (
    PEDIDO_GRANDE,
    PEDIDO_PEQUENO,
    ajustes_prueba,
    consultar,
    conversacion,
    uno,
)

DEVOLVER_CAFETERA = f"Quiero devolver la cafetera del pedido {PEDIDO_GRANDE} porque gotea"
TABLAS_CHECKPOINT = ("checkpoints", "checkpoint_blobs", "checkpoint_writes", "checkpoint_migrations")


@pytest.fixture
def servicio(bd_url):
    s = crear_servicio(ajustes_prueba(bd_url), url=bd_url, pausa_reintentos=0.01)
    yield s
    s.cerrar()


def _filas_checkpoint(bd_url: str, hilo: str) -> dict[str, int]:
    return {
        tabla: uno(bd_url, f"SELECT count(*) FROM {tabla} WHERE thread_id = %(h)s", {"h": hilo})  # noqa: S608
        for tabla in TABLAS_CHECKPOINT[:3]
    }


def _envejecer(bd_url: str, *hilos: str, dias: int = 40) -> None:
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        c.execute(
            "UPDATE consultas_asistente SET actualizada = now() - make_interval(days => %(d)s) "
            "WHERE thread_id = ANY(%(h)s)",
            {"d": dias, "h": list(hilos)},
        )


def _huella_negocio(bd_url: str) -> dict[str, str]:
    """Contenido de cada tabla que no es del checkpointer (md5 de sus filas ordenadas)."""
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        tablas = [
            f["tablename"]
            for f in c.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
            if f["tablename"] not in TABLAS_CHECKPOINT
        ]
        return {
            tabla: c.execute(
                sql.SQL("SELECT count(*) || ':' || coalesce(md5(string_agg(t::text, '|' ORDER BY t::text)), '') "
                        "AS h FROM {} t").format(sql.Identifier(tabla))
            ).fetchone()["h"]
            for tabla in tablas
        }


def test_conversaciones_viejas_pierden_checkpoints_y_la_pendiente_igual_de_vieja_los_conserva(
    servicio, pool, bd_url
):
    cerrada, _ = conversacion(servicio, "C-0002", f"¿Dónde está mi pedido {PEDIDO_PEQUENO}?")
    abandonada, _ = conversacion(servicio, "C-0002", f"¿Dónde está mi pedido {PEDIDO_PEQUENO}?")
    pendiente, respuesta = conversacion(servicio, "C-0001", DEVOLVER_CAFETERA)
    reciente, _ = conversacion(servicio, "C-0002", f"¿Dónde está mi pedido {PEDIDO_PEQUENO}?")
    assert respuesta.estado == "esperando_aprobacion"
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        c.execute("UPDATE consultas_asistente SET estado = 'cerrada' WHERE thread_id = %s", (cerrada,))
    _envejecer(bd_url, cerrada, abandonada, pendiente)
    antes_pendiente = _filas_checkpoint(bd_url, pendiente)
    antes_reciente = _filas_checkpoint(bd_url, reciente)
    huella = _huella_negocio(bd_url)

    informe = limpiar(pool, dias=30)

    assert sorted(informe.hilos) == sorted([cerrada, abandonada])
    assert _filas_checkpoint(bd_url, cerrada) == {t: 0 for t in TABLAS_CHECKPOINT[:3]}
    assert _filas_checkpoint(bd_url, abandonada) == {t: 0 for t in TABLAS_CHECKPOINT[:3]}
    assert _filas_checkpoint(bd_url, pendiente) == antes_pendiente
    assert _filas_checkpoint(bd_url, reciente) == antes_reciente
    assert _huella_negocio(bd_url) == huella
    # La pausa sigue viva: la decisión del encargado se aplica y paga una vez.
    final = servicio.decidir(pendiente, "enc-talavera", [{"type": "approve"}])
    assert final.estado == "respondida"
    assert uno(bd_url, "SELECT count(*) FROM reembolsos WHERE thread_id = %(h)s", {"h": pendiente}) == 1


def test_cliente_que_vuelve_a_una_conversacion_limpiada_sigue_con_su_transcripcion(servicio, pool, bd_url):
    ctx = servicio.contexto_de_cliente("C-0002")
    hilo, _ = conversacion(servicio, "C-0002", f"¿Dónde está mi pedido {PEDIDO_PEQUENO}?")
    _envejecer(bd_url, hilo)
    assert limpiar(pool, dias=30).hilos == [hilo]

    respuesta = servicio.conversar(hilo, f"¿Y el pedido {PEDIDO_PEQUENO} cuándo llegó?", ctx)

    assert respuesta.estado == "respondida"
    textos = [m["texto"] for m in servicio.historial(hilo, ctx)["mensajes"]]
    assert len(textos) == 4 and textos[0].endswith(f"{PEDIDO_PEQUENO}?")


def test_pausa_sin_fila_en_la_cola_no_se_limpia_porque_el_checkpoint_la_guarda(servicio, pool, bd_url):
    # Caída entre el checkpoint de la pausa y el encolado: ni cola ni estado lo dicen.
    hilo, _ = conversacion(servicio, "C-0001", DEVOLVER_CAFETERA)
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        c.execute("DELETE FROM aprobaciones_pendientes WHERE thread_id = %s", (hilo,))
        c.execute("UPDATE consultas_asistente SET estado = 'abierta' WHERE thread_id = %s", (hilo,))
    _envejecer(bd_url, hilo)
    antes = _filas_checkpoint(bd_url, hilo)

    informe = limpiar(pool, dias=30)

    assert informe.hilos == []
    assert _filas_checkpoint(bd_url, hilo) == antes
    assert {"thread_id": hilo, "accion": "reencolada"} in servicio.reconciliar()


def test_decision_registrada_sin_aplicar_no_se_limpia(servicio, pool, bd_url):
    hilo, _ = conversacion(servicio, "C-0001", DEVOLVER_CAFETERA)
    servicio.decidir(hilo, "enc-talavera", [{"type": "approve"}])
    # Como si el proceso hubiera muerto tras registrar la decisión y antes de cerrarla.
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        c.execute("UPDATE decisiones_encargado SET aplicada = NULL WHERE thread_id = %s", (hilo,))
    _envejecer(bd_url, hilo)

    assert limpiar(pool, dias=30).hilos == []
    assert _filas_checkpoint(bd_url, hilo)["checkpoints"] > 0


def test_conversacion_en_uso_se_deja_para_la_proxima_vez(servicio, pool, bd_url):
    hilo, _ = conversacion(servicio, "C-0002", f"¿Dónde está mi pedido {PEDIDO_PEQUENO}?")
    _envejecer(bd_url, hilo)
    with psycopg.connect(bd_url, autocommit=True) as otro:
        otro.execute("SELECT pg_advisory_lock(%s, hashtext(%s))", (ESPACIO_HILOS, hilo))
        ocupado = limpiar(pool, dias=30)
        otro.execute("SELECT pg_advisory_unlock(%s, hashtext(%s))", (ESPACIO_HILOS, hilo))
    assert ocupado.hilos == [] and ocupado.ocupados == [hilo]
    assert _filas_checkpoint(bd_url, hilo)["checkpoints"] > 0

    assert limpiar(pool, dias=30).hilos == [hilo]


def test_dos_servidores_a_la_vez_solo_uno_limpia(servicio, pool, bd_url):
    hilo, _ = conversacion(servicio, "C-0002", f"¿Dónde está mi pedido {PEDIDO_PEQUENO}?")
    _envejecer(bd_url, hilo)
    with psycopg.connect(bd_url, autocommit=True) as otro_servidor:
        otro_servidor.execute("SELECT pg_advisory_lock(%s)", (CANDADO_RETENCION,))
        informe = limpiar(pool, dias=30)
    assert informe.omitida and informe.hilos == []
    assert _filas_checkpoint(bd_url, hilo)["checkpoints"] > 0


def test_conversacion_con_actividad_reciente_no_se_limpia(servicio, pool, bd_url):
    hilo, _ = conversacion(servicio, "C-0002", f"¿Dónde está mi pedido {PEDIDO_PEQUENO}?")
    _envejecer(bd_url, hilo, dias=29)
    assert limpiar(pool, dias=30).hilos == []
    assert limpiar(pool, dias=28).hilos == [hilo]


def test_dias_menor_que_uno_se_rechaza(pool):
    with pytest.raises(ValueError, match="al menos 1"):
        limpiar(pool, dias=0)


def test_orden_limpiar_de_la_cli(servicio, bd_url, monkeypatch):
    from nucleo.ajustes import ajustes

    hilo, _ = conversacion(servicio, "C-0002", f"¿Dónde está mi pedido {PEDIDO_PEQUENO}?")
    _envejecer(bd_url, hilo)
    app = typer.Typer()

    @app.callback()
    def principal() -> None:
        """CLI de prueba."""

    app.command("limpiar")(orden_limpiar)
    monkeypatch.setenv("DATABASE_URL", bd_url)
    ajustes.cache_clear()
    try:
        resultado = CliRunner().invoke(app, ["limpiar", "--dias", "30"])
    finally:
        ajustes.cache_clear()
    assert resultado.exit_code == 0, resultado.output
    assert "Checkpoints borrados de 1 conversaciones" in resultado.output
    assert consultar(bd_url, "SELECT thread_id FROM checkpoints WHERE thread_id = %(h)s", {"h": hilo}) == []
