"""La CLI en subprocesos: chat, aprobaciones, hilo y reconciliar sobre la base; decidir como
quien ha entrado, a través de ``agente serve`` (salida en español)."""

from __future__ import annotations

import pytest

from tests.apoyo.fabricas import PEDIDO_GRANDE, uno
from tests.apoyo.procesos import CliConServidor, cli_con_base


@pytest.fixture
def agente(bd_url, tmp_path):
    with CliConServidor(bd_url, tmp_path / "config") as cli:
        yield cli


def test_chat_por_terminal_muestra_la_espera_y_el_encargado_decide_por_cli(bd_url, agente):
    r = cli_con_base(bd_url, "chat", "--cliente", "C-0001",
                     entrada=f"Quiero devolver la cafetera del pedido {PEDIDO_GRANDE} porque gotea\n")
    assert r.returncode == 0, r.stderr
    assert "pendiente de revisión por un encargado" in r.stdout
    hilo = uno(bd_url, "SELECT thread_id FROM aprobaciones_pendientes")
    assert f"agente decidir {hilo}" in r.stdout

    lista = cli_con_base(bd_url, "aprobaciones", "--tienda", "talavera")
    assert lista.returncode == 0, lista.stderr
    assert hilo[:12] in lista.stdout and "120,00 EUR" in lista.stdout
    assert "supera el" in lista.stdout  # el motivo de la política
    assert "No hay aprobaciones pendientes." in cli_con_base(bd_url, "aprobaciones", "--tienda", "madrid-centro").stdout

    estado = cli_con_base(bd_url, "hilo", hilo)
    assert estado.returncode == 0, estado.stderr
    assert "Pausa pendiente" in estado.stdout and "reembolsar" in estado.stdout
    assert "Historia de checkpoints" in estado.stdout

    agente.entrar("enc-talavera")
    mala = agente("decidir", hilo, "rechazar")
    assert mala.returncode == 2
    assert mala.stderr.strip() == "Error: rechazar necesita --motivo: un rechazo necesita un motivo para el cliente"

    ok = agente("decidir", hilo, "editar", "--importe", "90")
    assert ok.returncode == 0, ok.stderr
    assert "90,00 EUR" in ok.stdout
    assert "Todo en orden" in cli_con_base(bd_url, "reconciliar").stdout


def test_decidir_por_cli_como_encargado_de_otra_tienda_falla_en_una_linea(bd_url, agente):
    r = cli_con_base(bd_url, "chat", "--cliente", "C-0001",
                     entrada=f"Quiero devolver la cafetera del pedido {PEDIDO_GRANDE} porque gotea\n")
    hilo = uno(bd_url, "SELECT thread_id FROM aprobaciones_pendientes")
    agente.entrar("enc-madrid-centro")
    mala = agente("decidir", hilo, "aprobar")
    assert mala.returncode == 2, r.stdout
    assert mala.stderr.strip() == "Error: esta aprobación es de otra tienda"
    assert uno(bd_url, "SELECT estado FROM aprobaciones_pendientes") == "pendiente"
