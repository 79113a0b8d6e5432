"""El CSV del historial se abre bien en una hoja de cálculo en español (LibreOffice de Debian,
sin interfaz, como lo abriría con doble clic alguien con el idioma en español) y el formato
para programas (``?formato=maquina``) sigue igual.

Sin ``soffice`` la prueba de LibreOffice se salta diciendo cómo instalarlo, salvo con
``AGENTE_EXIGIR_NAVEGADOR=1`` (CI lo pone y ``.ci/run`` instala ``libreoffice-calc-nogui``).
"""

from __future__ import annotations

import csv
import io
import os
import shutil
import subprocess
import zipfile
from datetime import datetime
from xml.etree import ElementTree
from zoneinfo import ZoneInfo

import pytest

from agente.servicio.decisiones.decididas import COLUMNAS_CSV, COLUMNAS_CSV_HOJA
from tests.apoyo.web_util import EDITAR_A_90, cab, conversacion_en_pausa

NOTA = "=HYPERLINK(1)"
_NS = {"table": "urn:oasis:names:tc:opendocument:xmlns:table:1.0",
       "office": "urn:oasis:names:tc:opendocument:xmlns:office:1.0",
       "text": "urn:oasis:names:tc:opendocument:xmlns:text:1.0"}
# Opciones del filtro CSV de LibreOffice: «;», comillas dobles, UTF-8 (76), desde la fila 1,
# columnas con formato estándar, idioma español de España (3082): lo que haría su hoja.
FILTRO_ESPANOL = "CSV:59,34,76,1,,3082"


@pytest.fixture(scope="module")
def soffice():
    programa = shutil.which("soffice") or shutil.which("libreoffice")
    if programa is None:
        if os.environ.get("AGENTE_EXIGIR_NAVEGADOR") == "1":
            pytest.fail("falta LibreOffice (apt-get install -y libreoffice-calc-nogui) y AGENTE_EXIGIR_NAVEGADOR=1")
        pytest.skip("sin LibreOffice (apt-get install -y libreoffice-calc-nogui): prueba de hoja de cálculo omitida")
    return programa


def _celda(celda) -> tuple[str, str]:
    """(tipo, valor) de una celda de ODS: («float», «90»), («date», «2026-...»), («string», texto)."""
    tipo = celda.get(f"{{{_NS['office']}}}value-type") or ""
    if tipo == "float":
        return tipo, celda.get(f"{{{_NS['office']}}}value")
    if tipo == "date":
        return tipo, celda.get(f"{{{_NS['office']}}}date-value")
    return tipo, "\n".join("".join(p.itertext()) for p in celda.findall("text:p", _NS))


def _leer_ods(ruta) -> list[list[tuple[str, str]]]:
    with zipfile.ZipFile(ruta) as ods:
        raiz = ElementTree.fromstring(ods.read("content.xml"))
    filas = []
    for fila in raiz.iter(f"{{{_NS['table']}}}table-row"):
        celdas = []
        for celda in fila.findall("table:table-cell", _NS):
            repetida = int(celda.get(f"{{{_NS['table']}}}number-columns-repeated") or 1)
            celdas.extend([_celda(celda)] * min(repetida, 50))
        while celdas and celdas[-1] == ("", ""):
            celdas.pop()
        if celdas:
            filas.append(celdas)
    return filas


def _editada(http, tok) -> str:
    hilo = conversacion_en_pausa(http, tok)
    r = http.post(f"/api/aprobaciones/{hilo}/decision", json={**EDITAR_A_90, "nota": NOTA},
                  headers=cab(tok("enc-talavera")))
    assert r.status_code == 200, r.text
    return hilo


def test_el_csv_por_defecto_se_abre_en_una_hoja_espanola_con_sus_columnas_numeros_y_fechas(
    http, tok, soffice, tmp_path
):
    hilo = _editada(http, tok)
    r = http.get("/api/decisiones.csv", headers=cab(tok("enc-talavera")))
    assert r.status_code == 200
    assert r.content.startswith(b"\xef\xbb\xbf")
    ruta = tmp_path / "decisiones.csv"
    ruta.write_bytes(r.content)
    perfil = tmp_path / "perfil-libreoffice"
    hecho = subprocess.run(
        [soffice, f"-env:UserInstallation=file://{perfil}", "--headless", "--norestore",
         f"--infilter={FILTRO_ESPANOL}", "--convert-to", "ods", "--outdir", str(tmp_path), str(ruta)],
        capture_output=True, text=True, timeout=180,
    )
    assert hecho.returncode == 0, hecho.stderr
    cabecera, fila, *resto = _leer_ods(tmp_path / "decisiones.ods")
    assert not resto
    assert [v for _, v in cabecera] == list(COLUMNAS_CSV_HOJA)
    valores = dict(zip(COLUMNAS_CSV_HOJA, fila, strict=False))
    assert valores["Hilo"] == ("string", hilo)
    assert valores["Importe propuesto (EUR)"] == ("float", "120")
    assert valores["Importe final (EUR)"] == ("float", "90")
    assert valores["Espera (segundos)"][0] == "float"
    assert (valores["Decisión"][1], valores["Operación"][1]) == ("editada", "Reembolso")
    assert valores["Pedido"] == ("string", "P-20260917-0041")
    # Una fecha de verdad, en la hora de la tienda (la zona va en su columna).
    tipo, decidida = valores["Decidida"]
    assert tipo == "date"
    ahora = datetime.now(ZoneInfo("Europe/Madrid")).replace(tzinfo=None)
    assert abs((datetime.fromisoformat(decidida) - ahora).total_seconds()) < 600
    assert valores["Zona horaria"][1].startswith("Europe/Madrid (UTC+0")
    # Lo que parecería una fórmula llega como texto, nunca como fórmula.
    assert valores["Nota"][0] == "string" and NOTA in valores["Nota"][1]


def test_el_formato_para_maquinas_no_cambia(http, tok):
    hilo = _editada(http, tok)
    r = http.get("/api/decisiones.csv", params={"formato": "maquina"}, headers=cab(tok("enc-talavera")))
    assert r.status_code == 200 and not r.content.startswith(b"\xef\xbb\xbf")
    assert r.text.splitlines()[0] == ",".join(COLUMNAS_CSV)
    (fila,) = list(csv.DictReader(io.StringIO(r.text)))
    assert (fila["hilo"], fila["decision"], fila["operacion"]) == (hilo, "edit", "reembolsar")
    assert (fila["importe_propuesto"], fila["importe_final"]) == ("120.00", "90.00")
    assert datetime.fromisoformat(fila["decidida"]).utcoffset().total_seconds() == 0  # ISO 8601 en UTC
    assert fila["nota"] == "'" + NOTA
    (accion,) = http.get("/api/decisiones", headers=cab(tok("enc-talavera"))).json()["decisiones"][0]["acciones"]
    assert (accion["nombre"], accion["titulo"]) == ("reembolsar", "Reembolso")  # la pestaña Historial lee el título
    assert http.get("/api/decisiones.csv", params={"formato": "excel"},
                    headers=cab(tok("enc-talavera"))).status_code == 422
