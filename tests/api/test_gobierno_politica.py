"""Gobierno de la política por la API HTTP (modelo offline, demo): nadie amplía su propia
autoridad, cada valor tiene dominio, lo que decide dinero se fija al pausar y un firmante
posterior puede editar a la baja. Cada historia del issue es una prueba; la auditoría del
plano de control falla con cada manipulación."""

from __future__ import annotations

import functools
import re
import threading
from decimal import Decimal

import psycopg
import psycopg.sql
import pytest

from agente.bd.pool import KWARGS_CONEXION
from agente.demo.catalogo import ENCARGADOS
from agente.servicio.auditoria.informe import hallazgos, informe
from politicas.lectura_matriz import leer_matriz
from politicas.matriz_autoridad import autoridad_necesaria
from tests.apoyo.fabricas import esperar_bloqueadas
from tests.apoyo.firmas import pausa_con
from tests.apoyo.web_util import sql

_NOMBRE = {e[0]: e[2] for e in ENCARGADOS}

PEDIDO_650 = "P-20261006-0650"  # C-0006, talavera: dos firmas, una de gerente o regional
CAFETERA = "P-20260917-0041"  # C-0001, talavera: una CAF-001 pagada a 120,00


def _pausa_650(http, como) -> str:
    return pausa_con(http, como, "C-0006", f"Quiero devolver el pedido {PEDIDO_650} porque llegó roto")


def _decidir(http, como, hilo: str, quien: str, decisiones=None):
    return http.post(f"/api/aprobaciones/{hilo}/decision", headers=como(quien),
                     json={"decisiones": decisiones or [{"type": "approve"}]})


def _editar(importe: str) -> list[dict]:
    return [{"type": "edit", "edited_action": {"name": "reembolsar",
                                               "args": {"pedido": PEDIDO_650, "importe": importe}}}]


def _firmar_solicitud(http, como, solicitud: int, quien: str, decision: str = "aprobar", motivo=None):
    return http.post(f"/api/solicitudes-politica/{solicitud}/decision", headers=como(quien),
                     json={"decision": decision, **({"motivo": motivo} if motivo else {})})


def _auditoria(url: str) -> dict:
    with psycopg.connect(url, **KWARGS_CONEXION) as c:
        return informe(c, pendientes_mas_de_segundos=3600)


def _politica(http, como, quien="ger-talavera") -> dict:
    return http.get("/api/politica/talavera", headers=como(quien)).json()


# -- la historia del gerente que apaga los controles -------------------------------------------


def test_el_gerente_no_puede_quitar_limites_ni_subir_nada_por_encima_del_suyo(http, como, ajustes):
    antes = _politica(http, como)
    # Lo que hizo el atacante: quitar los límites de encargado y gerente y la doble firma.
    r = http.post("/api/politica/talavera", headers=como("ger-talavera"), json={
        "limites": {"reembolso": {"encargado": None, "gerente": None}}, "dos_firmas": {"reembolso": None}})
    assert r.status_code == 403, r.text
    assert "por encima de su propio límite" in r.json()["detalle"] and "1.000,00 EUR" in r.json()["detalle"]
    # Un umbral de reembolso automático por encima de su límite de reembolso, tampoco.
    r = http.post("/api/politica/talavera", headers=como("ger-talavera"),
                  json={"umbrales": {"limite_reembolso": "1300"}})
    assert r.status_code == 403, r.text
    assert _politica(http, como) == antes
    assert sql(ajustes.database_url, "SELECT count(*) AS n FROM solicitudes_politica")[0]["n"] == 0


def test_la_ampliacion_del_gerente_espera_a_la_regional_y_mientras_nada_cambia(http, como, ajustes):
    r = http.post("/api/politica/talavera", headers=como("ger-talavera"), json={
        "limites": {"reembolso": {"encargado": "700"}}, "dos_firmas": {"reembolso": "800"},
        "motivo": "campaña de Navidad"})
    assert r.status_code == 202, r.text
    solicitud = r.json()
    assert solicitud["estado"] == "pendiente" and solicitud["firman"] == "un regional de la región de la tienda"
    assert [d["texto"] for d in solicitud["diferencias"]] == [
        "Límite de encargado en reembolsos: 300,00 EUR → 700,00 EUR",
        "Dos firmas en reembolsos por encima de: 500,00 EUR → 800,00 EUR"]
    assert {d["sentido"] for d in solicitud["diferencias"]} == {"amplia"}
    assert _politica(http, como)["matriz"]["propia"] is False  # nada aplicado todavía

    # Mientras espera, 650,00 EUR sigue necesitando dos firmas, una de gerente o regional.
    hilo = _pausa_650(http, como)
    tarjeta = http.get(f"/api/aprobaciones/{hilo}", headers=como("enc-talavera")).json()
    assert (tarjeta["requisito"]["firmas_necesarias"], tarjeta["requisito"]["rol_minimo"]) == (2, "gerente")
    assert _decidir(http, como, hilo, "enc-talavera").json()["estado"] == "esperando_firmas"

    # Ni el autor ni un encargado la firman; la regional de la región, sí.
    propia = _firmar_solicitud(http, como, solicitud["id"], "ger-talavera")
    assert propia.status_code == 403 and "propio cambio" in propia.json()["detalle"]
    assert _firmar_solicitud(http, como, solicitud["id"], "enc-talavera").status_code == 403
    # La lista de la regional la enseña; la del encargado no existe (no administra).
    lista = http.get("/api/solicitudes-politica", headers=como("reg-centro")).json()
    assert [s["id"] for s in lista] == [solicitud["id"]]
    assert http.get("/api/solicitudes-politica", headers=como("enc-talavera")).status_code == 403
    firmada = _firmar_solicitud(http, como, solicitud["id"], "reg-centro")
    assert firmada.status_code == 200, firmada.text
    assert (firmada.json()["estado"], firmada.json()["decidida_por"]) == ("aplicada", "reg-centro")
    assert _firmar_solicitud(http, como, solicitud["id"], "reg-centro").status_code == 409

    politica = _politica(http, como)
    assert politica["matriz"]["reglas"]["reembolso"]["limites"]["encargado"] == "700.00"
    assert politica["matriz"]["reglas"]["reembolso"]["dos_firmas_por_encima"] == "800.00"
    [version] = politica["historial_matriz"]
    assert (version["creada_por"], version["firmada_por"], version["solicitud_id"], version["motivo"]) == (
        "ger-talavera", "reg-centro", solicitud["id"], "campaña de Navidad")
    # El personal lee nombres, no ids (issue 43): quién la escribió y quién la firmó.
    assert (version["creada_por_nombre"], version["firmada_por_nombre"]) == (_NOMBRE["ger-talavera"], _NOMBRE["reg-centro"])
    assert politica["matriz"]["creada_por_nombre"] == _NOMBRE["ger-talavera"]
    assert politica["historial"][0]["creada_por_nombre"] == "el sistema"
    # Lo que ya esperaba sigue con su versión: el gerente cierra la de 650.
    assert _decidir(http, como, hilo, "ger-talavera").json()["estado"] == "aplicada"
    # Desde ahora, 650,00 EUR lo firma un encargado solo.
    with psycopg.connect(ajustes.database_url, **KWARGS_CONEXION) as c:
        requisito = autoridad_necesaria(leer_matriz(c, tienda="talavera"), "reembolso", "650.00")
    assert (requisito.firmas, requisito.rol_minimo) == (1, "encargado")
    assert hallazgos(_auditoria(ajustes.database_url)) == 0


def test_un_endurecimiento_se_aplica_al_momento_y_queda_en_la_historia(http, como):
    r = http.post("/api/politica/talavera", headers=como("ger-talavera"), json={
        "umbrales": {"limite_reembolso": "40", "horas_caducidad": 24},
        "dos_firmas": {"reembolso": "400"}, "motivo": "más control"})
    assert r.status_code == 200, r.text
    politica = r.json()
    assert politica["umbrales"]["limite_reembolso"] == "40.00" and politica["umbrales"]["horas_caducidad"] == 24
    ultima = politica["historial"][-1]
    assert (ultima["version"], ultima["creada_por"], ultima["motivo"], ultima["firmada_por"]) == (
        politica["version"], "ger-talavera", "más control", None)
    assert politica["historial_matriz"][-1]["creada_por"] == "ger-talavera"


def test_el_cambio_de_una_regional_lo_firma_otra_regional_de_la_region(http, como, ajustes):
    sql(ajustes.database_url, "INSERT INTO encargados (id, tienda, nombre, activo, rol) VALUES "
        "('reg-centro-2', 'madrid-centro', 'Elena Ruiz', true, 'regional')")
    sql(ajustes.database_url, "INSERT INTO tiendas_regionales VALUES ('reg-centro-2', 'talavera')")
    r = http.post("/api/politica/talavera", headers=como("reg-centro"),
                  json={"umbrales": {"limite_reembolso": "90"}})
    assert r.status_code == 202 and r.json()["firman"] == "otro regional de la región de la tienda", r.text
    solicitud = r.json()["id"]
    assert _firmar_solicitud(http, como, solicitud, "reg-centro").status_code == 403
    assert _firmar_solicitud(http, como, solicitud, "ger-talavera").status_code == 403  # por debajo
    rechazo_sin_motivo = _firmar_solicitud(http, como, solicitud, "reg-centro-2", "rechazar")
    assert rechazo_sin_motivo.status_code == 422
    firmada = _firmar_solicitud(http, como, solicitud, "reg-centro-2")
    assert firmada.status_code == 200 and firmada.json()["version_umbrales"] is not None, firmada.text
    assert _politica(http, como)["umbrales"]["limite_reembolso"] == "90.00"
    assert hallazgos(_auditoria(ajustes.database_url)) == 0


def test_una_matriz_incoherente_es_422_al_proponerla_y_no_queda_solicitud(http, como, ajustes):
    # Antes: 202, una solicitud que solo fallaba (422) cuando la regional la firmaba.
    antes = _politica(http, como)
    r = http.post("/api/politica/talavera", headers=como("reg-centro"),
                  json={"limites": {"reembolso": {"encargado": "1200"}}})
    assert r.status_code == 422, r.text
    assert "gerente no puede tener menos límite que encargado" in r.json()["detalle"]
    r = http.post("/api/politica/talavera", headers=como("reg-centro"),
                  json={"limites": {"reembolso": {"gerente": "200"}}})
    assert r.status_code == 422, r.text
    assert sql(ajustes.database_url, "SELECT count(*) AS n FROM solicitudes_politica")[0]["n"] == 0
    assert _politica(http, como) == antes


def _ampliacion_de_ger_talavera(http, como) -> int:
    r = http.post("/api/politica/talavera", headers=como("ger-talavera"),
                  json={"limites": {"reembolso": {"encargado": "700"}}})
    assert r.status_code == 202, r.text
    return r.json()["id"]


@pytest.mark.parametrize("baja", [
    "UPDATE encargados SET activo = false WHERE id = 'ger-talavera'",
    "UPDATE encargados SET rol = 'encargado' WHERE id = 'ger-talavera'",
], ids=["de-baja", "sin-el-rol"])
def test_la_solicitud_de_un_autor_que_ya_no_administra_no_se_firma_y_caduca(http, como, ajustes, baja):
    solicitud = _ampliacion_de_ger_talavera(http, como)
    antes = _politica(http, como, quien="reg-centro")
    sql(ajustes.database_url, baja)
    r = _firmar_solicitud(http, como, solicitud, "reg-centro")
    assert r.status_code == 409, r.text
    assert "ya no puede cambiar la política de la tienda" in r.json()["detalle"]
    assert _politica(http, como, quien="reg-centro") == antes  # nada aplicado
    fila = sql(ajustes.database_url, "SELECT estado, decidida_por FROM solicitudes_politica")[0]
    assert (fila["estado"], fila["decidida_por"]) == ("caducada", None)
    otra = _firmar_solicitud(http, como, solicitud, "reg-centro", "rechazar", "no")
    assert otra.status_code == 409 and "caducada" in otra.json()["detalle"]


def test_una_baja_en_curso_mientras_se_firma_se_espera_y_la_solicitud_caduca(http, como, ajustes, pool):
    # La baja del autor, sin confirmar, retiene su fila; la firma la espera (FOR SHARE) y,
    # al confirmarse la baja, ve la fila nueva: 409, nada aplicado. Leyendo el autor sin
    # bloquearlo, la firma vería la foto de antes de la baja y aplicaría el cambio.
    solicitud = _ampliacion_de_ger_talavera(http, como)
    antes = _politica(http, como, quien="reg-centro")
    resultado: dict = {}
    with psycopg.connect(ajustes.database_url, autocommit=True) as baja:
        baja.execute("BEGIN")
        baja.execute("UPDATE encargados SET activo = false WHERE id = 'ger-talavera'")
        firma = threading.Thread(target=lambda: resultado.__setitem__(
            "r", _firmar_solicitud(http, como, solicitud, "reg-centro")))
        firma.start()
        try:
            esperar_bloqueadas(pool, 1)
        finally:
            baja.execute("COMMIT")
            firma.join(timeout=60)
    assert resultado["r"].status_code == 409, resultado["r"].text
    assert "ya no puede cambiar la política de la tienda" in resultado["r"].json()["detalle"]
    assert _politica(http, como, quien="reg-centro") == antes


def test_la_pasada_periodica_caduca_las_solicitudes_de_un_autor_dado_de_baja(http, como, ajustes):
    from agente.servicio.politica import cambios_politica

    solicitud = _ampliacion_de_ger_talavera(http, como)
    with psycopg.connect(ajustes.database_url, **KWARGS_CONEXION) as c:
        assert cambios_politica.caducar(c) == []
        c.execute("UPDATE encargados SET activo = false WHERE id = 'ger-talavera'")
        assert cambios_politica.caducar(c) == [solicitud]
    fila = sql(ajustes.database_url, "SELECT estado, motivo_decision FROM solicitudes_politica")[0]
    assert fila["estado"] == "caducada" and "ya no puede cambiar la política" in fila["motivo_decision"]


# -- dominios ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("cuerpo", "rango"), [
    ({"umbrales": {"horas_caducidad": 100000000}}, "entre 1 y 720 horas"),
    ({"umbrales": {"horas_caducidad": 0}}, "entre 1 y 720 horas"),
    ({"umbrales": {"devoluciones_max_30d": 0}}, "entre 1 y 100 devoluciones"),
    ({"umbrales": {"ventana_devoluciones_dias": 99999999999}}, "entre 1 y 365 días"),
    ({"umbrales": {"limite_reembolso": "9999999"}}, "entre 0,00 EUR y 1.000.000,00 EUR"),
    ({"umbrales": {"limite_reembolso": "12.345"}}, "dos decimales como mucho"),
    ({"limites": {"reembolso": {"encargado": "1000000.01"}}}, "entre 0,00 EUR y 1.000.000,00 EUR"),
])
def test_un_valor_fuera_de_su_dominio_es_422_con_el_rango(http, como, cuerpo, rango):
    r = http.post("/api/politica/talavera", headers=como("ger-talavera"), json=cuerpo)
    assert r.status_code == 422, r.text
    assert rango in r.text


MAL_ESCRITOS = ["1e1", "+5", " 20", "20.", ".5", "-0", "5e-1", "20 ", "1_0", "٢٠", "0x10", "Infinity", "NaN"]


@functools.cache
def _patron_del_esquema() -> str:
    # El esquema es del código, no de la base: se genera una vez (0,3-0,5 s cada vez; es el
    # mismo documento que sirve /openapi.json).
    from agente.web.app import crear_app
    from tests.apoyo.web_util import ajustes_web

    esquema = crear_app(ajustes_web("postgresql://sin-base@127.0.0.1:1/nada")).openapi()[
        "components"]["schemas"]["UmbralesCambio"]["properties"]
    return esquema["limite_reembolso"]["pattern"]


@pytest.mark.parametrize("escrito", MAL_ESCRITOS)
@pytest.mark.parametrize("donde", ["umbral", "limite", "dos_firmas"])
def test_un_importe_mal_escrito_es_422_y_el_patron_del_esquema_tampoco_lo_admite(http, como, escrito, donde):
    # Antes se leía con Decimal: "1e1" era 10,00 EUR, "-0" era 0,00 y " 20", 20,00 (200 o 202).
    cuerpo = {"umbral": {"umbrales": {"limite_reembolso": escrito}},
              "limite": {"limites": {"reembolso": {"encargado": escrito}}},
              "dos_firmas": {"dos_firmas": {"reembolso": escrito}}}[donde]
    r = http.post("/api/politica/talavera", headers=como("ger-talavera"), json=cuerpo)
    assert r.status_code == 422, r.text
    assert "escrito como 20 o 20.50" in r.json()["detalle"], r.text
    assert re.fullmatch(_patron_del_esquema(), escrito) is None


@pytest.mark.parametrize("escrito", ["0", "40", "40.5", "40.50", "007"])
def test_un_importe_que_casa_con_el_patron_del_esquema_se_admite(http, como, escrito):
    assert re.fullmatch(_patron_del_esquema(), escrito)
    r = http.post("/api/politica/talavera", headers=como("ger-talavera"),
                  json={"umbrales": {"limite_reembolso": escrito}})
    assert r.status_code == 200, r.text


def test_la_cli_rechaza_los_mismos_importes_mal_escritos(ajustes, bd_url, tmp_path):
    from agente.web.app import crear_app
    from tests.apoyo.cli_sesion import Terminal
    from tests.apoyo.web_util import servidor_en_hilo

    with servidor_en_hilo(crear_app(ajustes)) as base:
        terminal = Terminal(base, tmp_path / "config")
        terminal.entrar("ger-talavera")
        for opcion, valor in (("--umbral", "limite_reembolso="), ("--limite", "reembolso.encargado="),
                              ("--dos-firmas", "reembolso=")):
            for escrito in ("1e1", "+5", " 20", "20.", ".5", "-0", "5e-1"):
                salida = terminal("politica", "fijar", "--tienda", "talavera", opcion, valor + escrito)
                assert salida.exit_code != 0, (opcion, escrito, salida.output)
                assert "escrito como 20 o 20.50" in salida.output, (opcion, escrito, salida.output)
    assert sql(bd_url, "SELECT count(*) AS n FROM solicitudes_politica")[0]["n"] == 0


def test_el_esquema_openapi_declara_los_dominios(http):
    esquema = http.get("/openapi.json").json()["components"]["schemas"]["UmbralesCambio"]["properties"]
    assert (esquema["horas_caducidad"]["minimum"], esquema["horas_caducidad"]["maximum"]) == (1, 720)
    assert "1000000" in esquema["limite_reembolso"]["pattern"]


def test_la_cli_y_la_base_aplican_los_mismos_dominios(ajustes, bd_url, tmp_path):
    from agente.web.app import crear_app
    from politicas.valores import VALORES
    from tests.apoyo.cli_sesion import Terminal
    from tests.apoyo.web_util import servidor_en_hilo

    with servidor_en_hilo(crear_app(ajustes)) as base:
        terminal = Terminal(base, tmp_path / "config")
        terminal.entrar("ger-talavera")
        salida = terminal("politica", "fijar", "--tienda", "talavera", "--umbral", "horas_caducidad=100000000")
    assert salida.exit_code != 0 and "entre 1 y 720 horas" in salida.output
    # Los CHECK de sql/012 dicen lo mismo que la declaración: el borde vale, uno más no.
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        for nombre, valor in VALORES.items():
            paso = Decimal("0.01") if valor.tipo == "dinero" else 1
            for dato, vale in ((valor.minimo, True), (valor.maximo, True),
                               (valor.minimo - paso, False), (valor.maximo + paso, False)):
                with c.transaction(force_rollback=True):
                    try:
                        c.execute(psycopg.sql.SQL("UPDATE politicas_tienda SET {} = %s WHERE tienda = 'talavera'")
                                  .format(psycopg.sql.Identifier(nombre)), (dato,))
                        aceptado = True
                    except psycopg.errors.CheckViolation:
                        aceptado = False
                assert aceptado is vale, (nombre, dato)


def test_un_plazo_fuera_de_rango_no_tumba_la_bandeja_y_la_auditoria_lo_ve(http, como, ajustes):
    hilo = _pausa_650(http, como)
    sql(ajustes.database_url, "UPDATE aprobaciones_pendientes "
        "SET caduca = creada + interval '100000000 hours' WHERE thread_id = %(h)s", {"h": hilo})
    bandeja = http.get("/api/aprobaciones", headers=como("enc-talavera"))
    assert bandeja.status_code == 200, bandeja.text
    [fila] = bandeja.json()
    assert fila["plazo_fuera_de_rango"] is True
    assert http.get(f"/api/aprobaciones/{hilo}", headers=como("enc-talavera")).status_code == 200
    encontrados = _auditoria(ajustes.database_url)["politica"]["plazo_fuera_de_rango"]
    assert [f["thread_id"] for f in encontrados] == [hilo]
    # Y se puede decidir igual.
    assert _decidir(http, como, hilo, "enc-talavera").json()["estado"] == "esperando_firmas"


# -- lo que decide dinero se fija al pausar ----------------------------------------------------


def test_la_diferencia_de_un_cambio_se_cobra_como_dijo_la_pausa(http, como, ajustes):
    hilo = pausa_con(http, como, "C-0001", f"Quiero cambiar la cafetera del pedido {CAFETERA} por la CAF-004")
    tarjeta = http.get(f"/api/aprobaciones/{hilo}", headers=como("enc-talavera")).json()
    assert "129,00 EUR" in " ".join(tarjeta["acciones"][0]["motivos"]) + tarjeta["acciones"][0]["descripcion"]
    # El gerente perdona diferencias de hasta 1.000 EUR (amplía: firma la regional).
    r = http.post("/api/politica/talavera", headers=como("ger-talavera"),
                  json={"umbrales": {"diferencia_minima_liquidable": "1000"}})
    assert r.status_code == 202, r.text
    assert _firmar_solicitud(http, como, r.json()["id"], "reg-centro").status_code == 200
    assert _politica(http, como)["umbrales"]["diferencia_minima_liquidable"] == "1000.00"
    r = _decidir(http, como, hilo, "enc-talavera")
    assert r.status_code == 200 and r.json()["estado"] == "aplicada", r.text
    movimientos = sql(ajustes.database_url, "SELECT tipo, importe FROM pasarela_movimientos")
    assert [(m["tipo"], m["importe"]) for m in movimientos] == [("cobro", Decimal("129.00"))]
    texto = r.json()["mensaje_cliente"]
    assert "129,00 EUR" in texto and "no la cobra" not in texto
    [cambio] = sql(ajustes.database_url, "SELECT liquidacion, valores_politica FROM sustituciones")
    assert cambio["liquidacion"] == "cobro"
    assert cambio["valores_politica"]["origen"] == "instantanea"
    assert hallazgos(_auditoria(ajustes.database_url)) == 0


# -- editar a la baja tras la primera firma ----------------------------------------------------


@pytest.mark.parametrize("segundo", ["ger-talavera", "enc-talavera-2", "reg-centro"])
def test_un_firmante_posterior_edita_a_la_baja_y_cuentan_las_firmas_dadas(http, como, ajustes, segundo):
    hilo = _pausa_650(http, como)
    r = _decidir(http, como, hilo, "enc-talavera", _editar("600.00"))
    assert r.json() == {"estado": "esperando_firmas", "firmas": 1, "firmas_necesarias": 2}, r.text
    r = _decidir(http, como, hilo, segundo, _editar("290.00"))
    assert r.status_code == 200 and r.json()["estado"] == "aplicada", r.text
    assert [f["importe"] for f in sql(ajustes.database_url, "SELECT importe FROM reembolsos")] == [Decimal("290.00")]
    assert hallazgos(_auditoria(ajustes.database_url)) == 0


def test_editar_a_la_baja_no_deja_cerrar_a_quien_no_cubre_el_importe_nuevo(http, como):
    hilo = _pausa_650(http, como)
    _decidir(http, como, hilo, "enc-talavera", _editar("600.00"))
    r = _decidir(http, como, hilo, "enc-talavera-2", _editar("550.00"))  # aún 2 firmas y gerente
    assert r.status_code == 403, r.text
    assert _decidir(http, como, hilo, "ger-talavera", _editar("700.00")).status_code == 409  # nunca al alza (no encaja con lo pedido)


# -- la auditoría del plano de control ----------------------------------------------------------


def test_la_auditoria_encuentra_cada_manipulacion_del_plano_de_control(http, como, ajustes):
    url = ajustes.database_url
    hilo = pausa_con(http, como, "C-0001", f"Quiero cambiar la cafetera del pedido {CAFETERA} por la CAF-004")
    assert _decidir(http, como, hilo, "enc-talavera").json()["estado"] == "aplicada"
    assert hallazgos(_auditoria(url)) == 0
    with psycopg.connect(url, **KWARGS_CONEXION) as c:
        # 1. Una versión que amplía escrita a mano, sin solicitud firmada.
        with c.transaction(force_rollback=True):
            c.execute("UPDATE politicas_tienda SET limite_reembolso = 900 WHERE tienda = 'talavera'")
            encontrados = informe(c)["politica"]
            assert [h["que"] for h in encontrados["ampliacion_sin_firma"]] == ["umbrales"]
        # 2. Una versión de la matriz en la que el gerente sube su propio límite.
        with c.transaction(force_rollback=True):
            from agente.servicio.politica.gestion_autoridad import fijar_matriz

            vigente = leer_matriz(c, tienda="talavera")
            limites = {r: dict(v) for r, v in vigente.limites.items()}
            limites["reembolso"]["gerente"] = Decimal("5000.00")
            fijar_matriz(c, tienda="talavera", limites=limites, dos_firmas_por_encima=vigente.dos_firmas_por_encima,
                         autor="ger-talavera")
            encontrados = informe(c)["politica"]
            assert len(encontrados["limite_propio"]) == 1 and len(encontrados["ampliacion_sin_firma"]) == 1
        # 3. Un efecto que se liquidó con otro mínimo que el de su instantánea.
        with c.transaction(force_rollback=True):
            c.execute("UPDATE sustituciones SET valores_politica = jsonb_set(valores_politica, "
                      "'{diferencia_minima_liquidable}', '\"1000.00\"')")
            assert len(informe(c)["politica"]["efecto_fuera_de_instantanea"]) == 1
        # 4. Una instantánea que no es la versión que nombra.
        with c.transaction(force_rollback=True):
            c.execute("UPDATE evaluaciones_politica SET valores = jsonb_set(valores, "
                      "'{diferencia_minima_liquidable}', '\"1000.00\"') WHERE thread_id = %s", (hilo,))
            encontrados = informe(c)["politica"]
            assert [f["thread_id"] for f in encontrados["instantanea_alterada"]] == [hilo]
            assert len(encontrados["efecto_fuera_de_instantanea"]) == 1
        assert hallazgos(informe(c)) == 0


# -- la migración repara lo que dejaron versiones anteriores ------------------------------------


def test_la_migracion_lleva_al_borde_lo_fuera_de_dominio_y_repara_los_plazos(bd_sin_migrar_url, tmp_path):
    import shutil

    from agente.bd.migraciones import CARPETA_SQL, migrar
    from agente.demo.carga import cargar_demo

    anteriores = tmp_path / "sql"
    anteriores.mkdir()
    for ruta in sorted(CARPETA_SQL.glob("*.sql")):
        if ruta.name < "012":
            shutil.copy(ruta, anteriores / ruta.name)
    migrar(bd_sin_migrar_url, carpeta=anteriores)
    with psycopg.connect(bd_sin_migrar_url, **KWARGS_CONEXION) as c:
        cargar_demo(c)
        c.execute("UPDATE politicas_tienda SET horas_caducidad = 100000000, devoluciones_max_30d = 5000 "
                  "WHERE tienda = 'talavera'")
        c.execute("INSERT INTO consultas_asistente (thread_id, cliente_id, tienda) VALUES ('h-viejo', 'C-0001', 'talavera')")
        c.execute("INSERT INTO aprobaciones_pendientes (thread_id, tienda, cliente_id, interrupt_id, peticion, "
                  "contexto, caduca) VALUES ('h-viejo', 'talavera', 'C-0001', 'i1', '{}', '{}', "
                  "now() + interval '100000000 hours')")
    migrar(bd_sin_migrar_url)
    with psycopg.connect(bd_sin_migrar_url, **KWARGS_CONEXION) as c:
        fila = c.execute("SELECT horas_caducidad, devoluciones_max_30d, version FROM politicas_tienda "
                         "WHERE tienda = 'talavera'").fetchone()
        assert (fila["horas_caducidad"], fila["devoluciones_max_30d"]) == (720, 100)
        versiones = c.execute("SELECT version, creada_por, motivo FROM politicas_tienda_versiones "
                              "WHERE tienda = 'talavera' ORDER BY version").fetchall()
        assert versiones[-1]["version"] == fila["version"] and versiones[-1]["creada_por"] == "sistema"
        assert "fuera de su dominio" in versiones[-1]["motivo"]
        plazo = c.execute("SELECT caduca - creada AS plazo FROM aprobaciones_pendientes").fetchone()["plazo"]
        assert plazo.total_seconds() == 720 * 3600
        assert informe(c)["politica"]["plazo_fuera_de_rango"] == []


def test_la_solicitud_avisa_a_quien_puede_firmarla_y_caduca_sola(http, como, ajustes):
    from agente.notificaciones.plantillas import cuerpo_json, pintar

    url = ajustes.database_url
    r = http.post("/api/politica/talavera", headers=como("ger-talavera"),
                  json={"umbrales": {"limite_reembolso": "100"}, "motivo": "rebajas"})
    solicitud = r.json()["id"]
    [aviso] = sql(url, "SELECT encargado_id, tipo, interrupt_id, datos FROM avisos_salida")
    assert (aviso["encargado_id"], aviso["tipo"], aviso["interrupt_id"]) == (
        "reg-centro", "cambio_politica", f"politica:{solicitud}")  # ni el autor ni los encargados
    mensaje = pintar(aviso["datos"], "https://tienda.example")
    assert "Límite de reembolso sin firma: 60,00 EUR → 100,00 EUR" in mensaje.texto and "Motivo: rebajas" in mensaje.texto
    assert "limite_reembolso" not in mensaje.texto and "ger-talavera" not in mensaje.texto
    assert mensaje.enlace == f"https://tienda.example/encargado#politica-{solicitud}"
    assert cuerpo_json("k", aviso["datos"], mensaje)["tipo"] == "cambio_politica_pendiente"
    # Vence: la pasada periódica la caduca y ya no se puede firmar.
    sql(url, "UPDATE solicitudes_politica SET creada = now() - interval '2 days', "
        "caduca = now() - interval '1 second'")
    assert _firmar_solicitud(http, como, solicitud, "reg-centro").status_code == 409
    assert http.app.state.servicio.caducar_solicitudes_politica() == [solicitud]
    assert http.get(f"/api/solicitudes-politica/{solicitud}", headers=como("reg-centro")).json()["estado"] == "caducada"
    assert _politica(http, como)["umbrales"]["limite_reembolso"] == "60.00"
