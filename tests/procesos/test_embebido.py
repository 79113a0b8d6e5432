"""El PostgreSQL embebido se para con el producto (SIGTERM y SIGINT), un pid obsoleto se
repara, y ``agente db start|stop|status`` lo manejan. Todo en subprocesos de verdad."""

from __future__ import annotations

import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest

from tests.apoyo.procesos import (
    GUION_AGENTE,
    SECRETO_FUERTE,
    ProcesoCli,
    cli,
    entorno_embebido,
    esperar,
    pid_postgres,
    pids_anotados,
    postgres_vivo,
)
from tests.apoyo.rutas import RAIZ

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


def test_las_ordenes_de_la_cli_no_paran_la_base_de_un_agente_serve_lanzado_con_el_guion(pgdata):
    """``.venv/bin/agente`` da un proceso llamado «agente» (no «python»): sigue contando
    como usuario, y el último de verdad en salir es quien para PostgreSQL."""
    env = _entorno(pgdata, "serve")
    assert cli(env, "db", "demo", programa=GUION_AGENTE).returncode == 0  # antes del servidor
    with ProcesoCli(env, "serve", programa=GUION_AGENTE) as web:
        web.esperar_listo()
        servidor = pid_postgres(pgdata)
        for orden in (("politica", "ver", "--tienda", "talavera"), ("aprobaciones",)):
            r = cli(env, *orden, programa=GUION_AGENTE)
            assert r.returncode == 0, (orden, r.stderr)
            assert postgres_vivo(servidor), orden
            assert web.responde("/readyz"), orden
        # Con el servidor usando la base, «agente db demo» no toca nada (ni la recarga ni la borra).
        for orden in (("db", "demo"), ("db", "demo", "--reiniciar", "--si")):
            r = cli(env, *orden, programa=GUION_AGENTE)
            assert r.returncode == 2, (orden, r.stdout, r.stderr)
            assert "un servidor («agente serve» o «agente demo») está usando esta base" in r.stderr, orden
            assert postgres_vivo(servidor), orden
            assert web.responde("/readyz"), orden
        estado = cli(env, "db", "status", programa=GUION_AGENTE)
        assert estado.returncode == 0, estado.stderr
        assert f"en marcha (pid {servidor})" in estado.stdout
        assert f"Lo usan los procesos: {web.proceso.pid} (agente serve --port {web.puerto})" in estado.stdout
        assert pids_anotados(pgdata) == [web.proceso.pid]
        assert web.senal(signal.SIGTERM) == 0, web.salida()
    assert not postgres_vivo(servidor)  # el servidor web era el último: él lo para
    assert pids_anotados(pgdata) == []


def test_agente_chat_sigue_vivo_tras_un_agente_decidir_y_ensena_la_decision(pgdata):
    """Órdenes del guion sobre el mismo embebido: ``aprobaciones`` y ``agente serve`` (que
    aplica el ``decidir`` de quien entró) salen y no se llevan la base de debajo del ``chat``
    abierto, que enseña la decisión y sigue conversando."""
    env = {**entorno_embebido(pgdata), "PYTHONUNBUFFERED": "1"}
    assert cli(env, "db", "demo", programa=GUION_AGENTE).returncode == 0
    chat = subprocess.Popen(
        [*GUION_AGENTE, "chat", "--cliente", "C-0001"], cwd=RAIZ, env=env, text=True,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )
    lineas: queue.Queue = queue.Queue()
    leidas: list[str] = []
    threading.Thread(target=lambda: [lineas.put(x) for x in chat.stdout], daemon=True).start()

    def esperar_linea(texto: str, limite: float = 90) -> str:
        fin = time.monotonic() + limite
        while time.monotonic() < fin:
            try:
                linea = lineas.get(timeout=1)
            except queue.Empty:
                continue
            leidas.append(linea)
            if texto in linea:
                return linea
        raise AssertionError(f"no llegó «{texto}»:\n{''.join(leidas)}")

    try:
        chat.stdin.write("Quiero devolver la cafetera del pedido P-20260917-0041 porque gotea\n")
        chat.stdin.flush()
        pista = esperar_linea("agente decidir")
        hilo = pista.split("agente decidir ", 1)[1].split()[0]
        servidor = pid_postgres(pgdata)
        # Otra orden del guion sobre el mismo embebido sale sin llevarse la base.
        assert cli(env, "aprobaciones", programa=GUION_AGENTE).returncode == 0
        assert postgres_vivo(servidor)
        # Decidir es de quien entra en la CLI, a través de un «agente serve» sobre la misma base.
        with ProcesoCli({**env, "AGENTE_DEMO": "1"}, "serve") as web:
            entorno_cli = {**env, "AGENTE_URL": web.esperar_listo(), "XDG_CONFIG_HOME": str(pgdata.parent / "config")}
            assert cli(entorno_cli, "entrar", "--demo", "enc-talavera").returncode == 0
            r = cli(entorno_cli, "decidir", hilo, "editar", "--importe", "90")
            assert r.returncode == 0, r.stderr
            esperar_linea("90,00 EUR")  # la decisión llega al chat abierto
            assert web.senal(signal.SIGTERM) == 0, web.salida()
        assert postgres_vivo(servidor)
        chat.stdin.write("¿Cuál es el estado del pedido P-20260917-0041?\n")
        chat.stdin.flush()
        esperar_linea("agente> ")  # y sigue conversando con la base en marcha
    finally:
        chat.stdin.close()
        codigo = chat.wait(timeout=60)
    salida = "".join(leidas) + "".join(iter(lambda: lineas.get() if not lineas.empty() else "", ""))
    assert codigo == 0, salida
    assert "Traceback" not in salida
    assert not postgres_vivo(servidor)  # el chat era el último: al salir lo para


@pytest.mark.parametrize("programa", [
    (sys.executable, "-m", "agente", "serve"),
    (str(Path(sys.executable).with_name("uvicorn")), "agente.web.app:app_desde_entorno", "--factory",
     "--workers", "2"),
], ids=["python-m-agente", "uvicorn-workers"])
def test_cada_punto_de_entrada_cuenta_como_usuario_y_el_ultimo_para_la_base(pgdata, programa):
    env = _entorno(pgdata, "serve")
    assert cli(env, "db", "migrate").returncode == 0
    with ProcesoCli(env, programa=programa) as web:
        web.esperar_listo()
        servidor = pid_postgres(pgdata)
        r = cli(env, "db", "url", programa=GUION_AGENTE)
        assert r.returncode == 0, r.stderr
        assert postgres_vivo(servidor) and web.responde("/readyz")
        usuarios = pids_anotados(pgdata)
        hijos = {h.pid for h in psutil.Process(web.proceso.pid).children(recursive=True)}
        assert usuarios and set(usuarios) <= {web.proceso.pid} | hijos, usuarios
        web.senal(signal.SIGTERM)
        log = web.salida()
    assert not postgres_vivo(servidor), log
    assert pids_anotados(pgdata) == []
    assert "Traceback" not in log


def test_un_pid_anotado_que_ahora_es_de_otro_proceso_no_cuenta_como_usuario(pgdata):
    """Un pid reutilizado (reinicio de la máquina): vivo, pero arrancó a otra hora que la
    anotada. No impide que el último usuario de verdad pare el servidor."""
    env = entorno_embebido(pgdata)
    assert cli(env, "db", "url").returncode == 0  # initdb y parada: la carpeta ya existe
    otro = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        (pgdata / ".handle_pids.json").write_text(f"[{otro.pid}]")
        (pgdata / ".agente-usuarios.json").write_text(f'{{"{otro.pid}": 1000.0}}')
        r = cli(env, "db", "url")
        assert r.returncode == 0, r.stderr
        assert pid_postgres(pgdata) is None  # «db url» fue el último usuario de verdad: lo paró
        assert pids_anotados(pgdata) == []
    finally:
        otro.kill()
        otro.wait()


def test_un_pid_obsoleto_se_detecta_se_repara_y_el_siguiente_en_salir_para_el_servidor(pgdata):
    env = entorno_embebido(pgdata)
    # Un proceso que abre el embebido y muere sin despedirse (SIGKILL) deja su pid anotado.
    muerto = subprocess.Popen(
        [sys.executable, "-c", "import os, sys; from agente.bd import embebido; "
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
