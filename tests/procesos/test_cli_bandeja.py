"""La CLI de la bandeja: prefijos de hilo, pistas que funcionan tal cual, horas con su zona,
el historial con filtros y ``agente chat`` enseñando la decisión que llega mientras está abierto.
Decidir y fijar la política actúan como quien ha entrado, a través del servidor de verdad.
La CLI corre en este proceso (``tests/apoyo/cli_sesion.py``); el chat abierto, que espera la
decisión mientras otra orden la toma, sigue siendo un proceso aparte."""

from __future__ import annotations

import os
import queue
import shlex
import subprocess
import sys
import threading
import time

import pytest

from tests.apoyo.cli_sesion import CliEnProceso, cli_en_proceso
from tests.apoyo.fabricas import PEDIDO_GRANDE, uno
from tests.apoyo.rutas import RAIZ

DEVOLVER = f"Quiero devolver la cafetera del pedido {PEDIDO_GRANDE} porque gotea\n"


@pytest.fixture
def agente(bd_url, tmp_path):
    """La CLI que habla con el servidor de verdad (en un hilo); ``agente.entrar(persona)``."""
    with CliEnProceso(bd_url, tmp_path / "config") as cli:
        yield cli


def _pausa(bd_url) -> tuple[str, str]:
    r = cli_en_proceso(bd_url, "chat", "--cliente", "C-0001", entrada=DEVOLVER)
    assert r.returncode == 0, r.stderr
    return uno(bd_url, "SELECT thread_id FROM aprobaciones_pendientes"), r.stdout


def test_la_pista_del_chat_son_dos_ordenes_que_funcionan_tal_cual(bd_url, agente):
    hilo, salida = _pausa(bd_url)
    (linea,) = [x for x in salida.splitlines() if "agente decidir" in x]
    orden = linea.split("agente decidir", 1)[1].split("  (o", 1)[0]
    assert orden.strip() == f"{hilo} aprobar"
    entrar = linea.split("en la demo: agente ", 1)[1].rstrip(")]")
    assert entrar == "entrar --demo enc-talavera"
    assert agente(*shlex.split(entrar)).returncode == 0
    r = agente("decidir", *shlex.split(orden))
    assert r.returncode == 0, r.stderr
    assert "Decisión registrada y aplicada" in r.stdout


def test_un_prefijo_unico_del_hilo_vale_para_decidir_y_para_ver_el_hilo(bd_url, agente):
    hilo, _ = _pausa(bd_url)
    assert cli_en_proceso(bd_url, "hilo", hilo[:8]).returncode == 0
    agente.entrar("enc-talavera")
    r = agente("decidir", hilo[:10], "editar", "--importe", "90")
    assert r.returncode == 0, r.stderr
    assert "90,00 EUR" in r.stdout
    assert uno(bd_url, "SELECT count(*) FROM aprobaciones_pendientes") == 0
    corto = agente("decidir", "h-", "aprobar")
    assert corto.returncode == 2 and "demasiado corto" in corto.stderr
    nada = agente("decidir", "h-ffffffffff", "aprobar")
    assert nada.returncode == 2 and "no hay ninguna aprobación pendiente en h-ffffffffff" in nada.stderr, nada.stderr


def test_un_prefijo_ambiguo_no_elige_ninguno(bd_url):
    from tests.apoyo.web_util import sql

    for hilo in ("h-abcd1", "h-abcd2"):
        sql(bd_url, "INSERT INTO consultas_asistente (thread_id, cliente_id, tienda) "
                    "VALUES (%(h)s, 'C-0001', 'talavera')", {"h": hilo})
    r = cli_en_proceso(bd_url, "hilo", "h-abcd")
    assert r.returncode == 2
    assert "varios hilos empiezan por «h-abcd»: h-abcd1, h-abcd2" in r.stderr


def test_sin_accion_o_sin_haber_entrado_el_error_dice_que_hacer_en_espanol(bd_url):
    hilo, _ = _pausa(bd_url)
    r = cli_en_proceso(bd_url, "decidir", hilo)
    assert r.returncode == 2
    assert "Missing argument" not in r.stderr
    assert f"falta la acción: agente decidir {hilo} ACCION" in r.stderr
    assert "aprobar | rechazar --motivo TEXTO | editar --importe 90" in r.stderr
    sin_quien = cli_en_proceso(bd_url, "decidir", hilo, "aprobar", XDG_CONFIG_HOME=str(RAIZ / ".no-existe"))
    assert sin_quien.returncode == 2 and "Missing" not in sin_quien.stderr
    assert "no has entrado" in sin_quien.stderr and "agente entrar --demo enc-talavera" in sin_quien.stderr


def test_la_lista_ensena_el_id_entero_y_la_hora_con_su_zona(bd_url):
    hilo, _ = _pausa(bd_url)
    r = cli_en_proceso(bd_url, "aprobaciones")
    assert r.returncode == 0, r.stderr
    assert hilo in r.stdout  # entero: se puede copiar
    assert "(hora de Madrid)" in r.stdout


def test_el_historial_por_cli_con_los_filtros_de_la_api(bd_url, agente):
    hilo, _ = _pausa(bd_url)
    agente.entrar("enc-talavera")
    agente("decidir", hilo, "editar", "--importe", "90")
    r = cli_en_proceso(bd_url, "aprobaciones", "--historial", "--decision", "editada", "--tienda", "talavera")
    assert r.returncode == 0, r.stderr
    assert hilo in r.stdout and "90,00 EUR" in r.stdout and "enc-talavera" in r.stdout, r.stdout
    assert "(hora de Madrid)" in r.stdout
    vacio = cli_en_proceso(bd_url, "aprobaciones", "--historial", "--decision", "rechazada")
    assert "No hay decisiones que cumplan los filtros." in vacio.stdout
    futuro = cli_en_proceso(bd_url, "aprobaciones", "--historial", "--desde", "2999-01-01")
    assert "No hay decisiones" in futuro.stdout


def test_el_historial_por_cli_dice_la_decision_y_la_operacion_en_espanol_y_el_pedido_entero(bd_url, agente):
    hilo, _ = _pausa(bd_url)
    agente.entrar("enc-talavera")
    agente("decidir", hilo, "editar", "--importe", "90")
    r = cli_en_proceso(bd_url, "aprobaciones", "--historial")
    assert r.returncode == 0, r.stderr
    assert "editada" in r.stdout and "Reembolso" in r.stdout
    for jerga in ("approve", "edit ", "reembolsar", "90.00"):
        assert jerga not in r.stdout, jerga
    assert PEDIDO_GRANDE in r.stdout  # entero en una línea: se puede copiar


def test_una_decision_desconocida_en_el_historial_lista_las_validas_en_espanol(bd_url):
    mala = cli_en_proceso(bd_url, "aprobaciones", "--historial", "--decision", "quizas")
    assert mala.returncode == 2
    assert mala.stderr.strip() == ("Error: decisión desconocida «quizas»: usa una de estas: "
                                   "aprobada, editada, rechazada, respondida, caducada")
    assert cli_en_proceso(bd_url, "aprobaciones", "--historial", "--decision", "edit").returncode == 0


def test_editar_por_cli_acepta_el_importe_con_coma(bd_url, agente):
    hilo, _ = _pausa(bd_url)
    agente.entrar("enc-talavera")
    r = agente("decidir", hilo, "editar", "--importe", "90,50")
    assert r.returncode == 0, r.stderr
    assert "90,50 EUR" in r.stdout
    assert str(uno(bd_url, "SELECT importe FROM reembolsos")) == "90.50"


def test_una_tienda_desconocida_es_un_error_y_no_una_cola_vacia(bd_url):
    for orden in (("aprobaciones",), ("aprobaciones", "--historial")):
        r = cli_en_proceso(bd_url, *orden, "--tienda", "sevilla")
        assert r.returncode == 2, r.stdout
        assert r.stderr.strip() == "Error: tienda desconocida: sevilla"
        assert "No hay" not in r.stdout


def test_el_chat_abierto_ensena_la_decision_que_llega_despues(bd_url, agente):
    proceso = subprocess.Popen(
        [sys.executable, "-m", "agente.cli", "chat", "--cliente", "C-0001"], cwd=RAIZ, text=True,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        env={**os.environ, "DATABASE_URL": bd_url, "PYTHONUNBUFFERED": "1"},
    )
    lineas: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lineas.put(x) for x in proceso.stdout], daemon=True).start()

    def esperar(texto: str, limite: float = 60) -> str:
        fin = time.monotonic() + limite
        while time.monotonic() < fin:
            try:
                linea = lineas.get(timeout=1)
            except queue.Empty:
                continue
            if texto in linea:
                return linea
        raise AssertionError(f"no llegó «{texto}»")

    try:
        proceso.stdin.write(DEVOLVER)
        proceso.stdin.flush()
        esperar("agente decidir")
        hilo = uno(bd_url, "SELECT thread_id FROM aprobaciones_pendientes")
        agente.entrar("enc-talavera")
        r = agente("decidir", hilo, "editar", "--importe", "90")
        assert r.returncode == 0, r.stderr
        llegada = esperar("90,00 EUR")
        assert "(hora de Madrid)" in llegada and llegada.lstrip().startswith("agente (")
    finally:
        proceso.stdin.close()
        proceso.wait(timeout=30)


def test_la_politica_por_cli_acepta_importes_con_coma(bd_url, agente):
    agente.entrar("ger-talavera")
    r = agente("politica", "fijar", "--tienda", "talavera",
                     "--umbral", "limite_reembolso=50,50", "--limite", "reembolso.encargado=250,00")
    assert r.returncode == 0, r.stderr
    assert str(uno(bd_url, "SELECT limite_reembolso FROM politicas_tienda WHERE tienda = 'talavera'")) == "50.50"
    mala = agente("politica", "fijar", "--tienda", "talavera",
                        "--umbral", "limite_reembolso=1,234.50")
    assert mala.returncode == 2 and "no es un número válido" in mala.stderr


def test_el_historial_por_cli_exporta_el_csv_en_los_dos_formatos(bd_url, tmp_path, agente):
    hilo, _ = _pausa(bd_url)
    agente.entrar("enc-talavera")
    agente("decidir", hilo, "editar", "--importe", "90")
    hoja = tmp_path / "hoja.csv"
    r = cli_en_proceso(bd_url, "aprobaciones", "--historial", "--csv", str(hoja))
    assert r.returncode == 0, r.stderr
    contenido = hoja.read_bytes()
    assert contenido.startswith(b"\xef\xbb\xbf") and ";editada;Reembolso;" in contenido.decode("utf-8-sig")
    maquina = cli_en_proceso(bd_url, "aprobaciones", "--historial", "--csv", "-", "--formato", "maquina")
    assert maquina.stdout.startswith("id,decidida,tienda,hilo,") and ",edit,reembolsar," in maquina.stdout
    assert ",90.00," in maquina.stdout
    malo = cli_en_proceso(bd_url, "aprobaciones", "--historial", "--csv", "-", "--formato", "excel")
    assert malo.returncode == 2 and "formato desconocido «excel»: usa hoja o maquina" in malo.stderr
