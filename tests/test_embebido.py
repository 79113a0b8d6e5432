"""El PostgreSQL embebido se para con el producto (SIGTERM y SIGINT), un pid obsoleto se
repara, y ``agente db start|stop|status`` lo manejan. Todo en subprocesos de verdad."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from .procesos import (
    SECRETO_FUERTE,
    ProcesoCli,
    cli,
    entorno_embebido,
    esperar,
    pid_postgres,
    pids_anotados,
    postgres_vivo,
)
from .web_util import RAIZ

pytestmark = [pytest.mark.lento, pytest.mark.temporal]


@pytest.fixture(scope="module")
def pgdata(tmp_path_factory):
    """Una carpeta de datos para todo el módulo: initdb una vez; cada test la deja parada."""
    carpeta = tmp_path_factory.mktemp("embebido") / "pgdata"
    yield carpeta
    cli(entorno_embebido(carpeta), "db", "stop", "--forzar")


def _orden(orden: str) -> tuple[str, ...]:
    return ("demo",) if orden == "demo" else ("serve",)


def _entorno(pgdata, orden: str) -> dict[str, str]:
    if orden == "demo":
        return entorno_embebido(pgdata)
    return entorno_embebido(pgdata, AGENTE_DEMO="0", AGENTE_SECRETO=SECRETO_FUERTE)


@pytest.mark.parametrize(("orden", "senal"), [("demo", signal.SIGTERM), ("demo", signal.SIGINT),
                                              ("serve", signal.SIGTERM), ("serve", signal.SIGINT)])
def test_la_senal_para_la_web_y_despues_el_postgres_embebido(pgdata, orden, senal):
    with ProcesoCli(_entorno(pgdata, orden), *_orden(orden)) as proceso:
        proceso.esperar_listo()
        servidor = pid_postgres(pgdata)
        assert postgres_vivo(servidor)
        assert pids_anotados(pgdata) == [proceso.proceso.pid]
        assert proceso.senal(senal) == 0, proceso.salida()
        log = proceso.salida()
    assert not postgres_vivo(servidor), log
    assert pid_postgres(pgdata) is None  # pg_ctl stop borra postmaster.pid: parada limpia
    assert pids_anotados(pgdata) == []
    # Primero se vacía la web y se cierra la app; después (ya fuera de uvicorn) se para PostgreSQL.
    assert "Application shutdown complete" in log


def test_un_pid_obsoleto_se_detecta_se_repara_y_el_siguiente_en_salir_para_el_servidor(pgdata):
    env = entorno_embebido(pgdata)
    # Un proceso que abre el embebido y muere sin despedirse (SIGKILL) deja su pid anotado.
    muerto = subprocess.Popen(
        [sys.executable, "-c", "import os, sys; from agente import embebido; "
         "embebido.arrancar(sys.argv[1]); os.kill(os.getpid(), 9)", str(pgdata)],
        cwd=RAIZ, env=env,
    )
    assert muerto.wait(timeout=120) == -signal.SIGKILL
    obsoleto = muerto.pid
    servidor = pid_postgres(pgdata)
    assert postgres_vivo(servidor)
    assert pids_anotados(pgdata) == [obsoleto]

    estado = cli(env, "db", "status")
    assert estado.returncode == 0, estado.stderr
    assert f"Pids obsoletos retirados de {pgdata}/.handle_pids.json: {obsoleto}" in estado.stdout
    assert f"en marcha (pid {servidor})" in estado.stdout
    assert "No lo usa ningún proceso" in estado.stdout
    assert pids_anotados(pgdata) == []

    # Otra vez el pid obsoleto: ahora lo repara el propio arranque de «agente demo».
    (pgdata / ".handle_pids.json").write_text(f"[{obsoleto}]")
    with ProcesoCli(env, "demo") as proceso:
        proceso.esperar_listo()
        assert pids_anotados(pgdata) == [proceso.proceso.pid]
        assert proceso.senal(signal.SIGTERM) == 0, proceso.salida()
    assert not postgres_vivo(servidor)


def test_un_postmaster_pid_de_un_proceso_que_no_es_postgres_no_impide_arrancar(pgdata):
    env = entorno_embebido(pgdata)
    assert cli(env, "db", "start").returncode == 0
    assert cli(env, "db", "stop").returncode == 0
    # Tras un reinicio de la máquina el pid del fichero puede ser de cualquier otro proceso.
    (pgdata / "postmaster.pid").write_text(f"{__import__('os').getpid()}\n{pgdata}\n0\n5432\n\n\n\nready\n")
    arranque = cli(env, "db", "start")
    assert arranque.returncode == 0, arranque.stderr
    assert "en marcha" in arranque.stdout
    assert cli(env, "db", "stop").returncode == 0


def test_db_start_status_y_stop(pgdata):
    env = entorno_embebido(pgdata)
    parado = cli(env, "db", "status")
    assert parado.returncode == 0, parado.stderr
    assert parado.stdout.splitlines()[0] == "PostgreSQL embebido: parado"
    assert f"Datos en: {pgdata}" in parado.stdout

    arranque = cli(env, "db", "start")
    assert arranque.returncode == 0, arranque.stderr
    servidor = pid_postgres(pgdata)
    assert postgres_vivo(servidor)  # sigue en marcha después de que «db start» termine
    assert f"en marcha (pid {servidor})" in arranque.stdout
    assert "hasta «agente db stop»" in arranque.stdout

    # Otras órdenes lo usan y, al acabar, no lo paran: lo arrancó «db start».
    assert cli(env, "db", "url").stdout.startswith("postgresql://")
    assert postgres_vivo(servidor)
    estado = cli(env, "db", "status")
    assert f"en marcha (pid {servidor})" in estado.stdout and f"Datos en: {pgdata}" in estado.stdout

    # Mientras un servidor web lo usa, «db stop» no se lo quita de debajo.
    with ProcesoCli(env, "demo") as proceso:
        proceso.esperar_listo()
        negado = cli(env, "db", "stop")
        assert negado.returncode == 2
        assert f"lo están usando los procesos {proceso.proceso.pid}" in negado.stderr
        assert proceso.senal(signal.SIGTERM) == 0
    assert postgres_vivo(servidor)  # la marca de «db start» manda: demo no lo para al salir

    parada = cli(env, "db", "stop")
    assert parada.returncode == 0, parada.stderr
    assert parada.stdout.strip() == f"PostgreSQL embebido parado (datos en {pgdata})."
    esperar(lambda: not postgres_vivo(servidor), 10, "postgres parado")
    assert cli(env, "db", "status").stdout.splitlines()[0] == "PostgreSQL embebido: parado"
    assert "ya estaba parado" in cli(env, "db", "stop").stdout


@pytest.mark.parametrize("orden", ["start", "stop", "status"])
def test_con_database_url_db_start_stop_status_dicen_que_solo_valen_para_el_embebido(orden, tmp_path):
    env = {**entorno_embebido(tmp_path / "pgdata"), "DATABASE_URL": "postgresql://nadie@127.0.0.1:1/x"}
    r = cli(env, "db", orden)
    assert r.returncode == 2
    assert r.stderr.strip().startswith("Error: db start, stop y status solo se aplican al PostgreSQL embebido")
    assert not (tmp_path / "pgdata").exists()  # no se ha tocado nada
