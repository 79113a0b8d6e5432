"""API de ingesta del back office de la tienda (issue 29, punto 1) por HTTP, con claves de API
de verdad sobre la base de la demo: upsert idempotente por el id de la tienda, lotes en JSON
lines con cada inválido en su línea, lo que rompería los libros (409), claves revocadas (401)
y sin alcance (403), y un pedido ingerido que el cliente reembolsa por el chat.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone

import psycopg
import pytest

from agente.bd.pool import KWARGS_CONEXION
from agente.servicio.tienda.ingesta import crear_clave, revocar_clave
from tests.apoyo.fabricas import consultar, uno
from tests.apoyo.web_util import cab

TIENDA = "talavera"
CLIENTE = "C-9001"
PEDIDO = "P-20261101-0001"
TODOS = ["clientes", "productos", "stock", "pedidos", "estados"]


def _clave(bd_url: str, alcances: list[str] = TODOS, tienda: str = TIENDA) -> str:
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        return crear_clave(c, tienda=tienda, nombre="pruebas", alcances=alcances).secreto


def _h(clave: str) -> dict[str, str]:
    return {"X-Clave-API": clave}


AHORA = datetime.now(UTC).replace(microsecond=0)


def _hace(dias: float) -> str:
    """Fechas fijas en el módulo: el mismo cuerpo otra vez es el mismo cuerpo."""
    return (AHORA - timedelta(days=dias)).isoformat()


def _cliente(**extra) -> dict:
    return {"nombre": "Lucía Ingesta", "email": "lucia@example.com",
            "direccion": {"calle": "Calle Mayor 5", "codigo_postal": "45600", "localidad": "Talavera de la Reina"},
            **extra}


def _pedido(**extra) -> dict:
    return {"cliente_id": CLIENTE, "fecha": _hace(5), "estado": "entregado", "enviado_en": _hace(4),
            "entregado_en": _hace(2), "referencia_pago": "pi_3Pprueba",
            "lineas": [{"linea": 1, "sku": "MEN-001", "unidades": 1, "precio_unitario": "24.90"},
                       {"linea": 2, "sku": "TEX-001", "unidades": 2, "precio_unitario": "15.00"}],
            "direccion_envio": {"calle": "Calle Mayor 5", "codigo_postal": "45600",
                                "localidad": "Talavera de la Reina"},
            **extra}


def _ingerir(http, clave: str) -> None:
    r = http.put(f"/api/tienda/v1/clientes/{CLIENTE}", json=_cliente(), headers=_h(clave))
    assert r.status_code == 200, r.text
    r = http.put(f"/api/tienda/v1/pedidos/{PEDIDO}", json=_pedido(), headers=_h(clave))
    assert r.status_code == 200, r.text
    assert r.json() == {"tipo": "pedido", "id": PEDIDO, "resultado": "creado", "version": 1}


def _lote(*registros) -> bytes:
    return "\n".join(r if isinstance(r, str) else json.dumps(r) for r in registros).encode() + b"\n"


def _foto(bd_url: str) -> list[dict]:
    """Lo que la ingesta escribe, para comparar antes y después."""
    return consultar(bd_url, """
        SELECT p.id, p.estado, p.importe, p.referencia_pago, p.calle, p.provincia,
               (SELECT json_agg(l ORDER BY l.linea) FROM lineas_pedido l WHERE l.pedido_id = p.id) AS lineas,
               (SELECT max(version) FROM ingesta_versiones v WHERE v.id = p.id) AS version
        FROM pedidos p WHERE p.id LIKE 'P-202611%%' ORDER BY p.id""")


def test_un_pedido_ingerido_lo_reembolsa_el_cliente_por_el_chat(http, tok, bd_url):
    clave = _clave(bd_url)
    _ingerir(http, clave)
    (pedido,) = consultar(bd_url, "SELECT tienda, importe, referencia_pago, provincia FROM pedidos WHERE id = %(p)s",
                 {"p": PEDIDO})
    assert (pedido["tienda"], str(pedido["importe"]), pedido["referencia_pago"], pedido["provincia"]) == (
        TIENDA, "54.90", "pi_3Pprueba", "Toledo")
    cabeceras = cab(tok(CLIENTE, tienda=TIENDA))
    hilo = http.post("/api/conversaciones", headers=cabeceras).json()["thread_id"]
    r = http.post(f"/api/conversaciones/{hilo}/mensajes", headers=cabeceras,
                  json={"texto": f"Quiero devolver la sartén del pedido {PEDIDO}"})
    assert r.status_code == 200, r.text
    assert r.json()["estado"] == "respondida", r.text
    (reembolso,) = consultar(bd_url, "SELECT numero, importe, estado FROM reembolsos WHERE pedido_id = %(p)s",
                             {"p": PEDIDO})
    assert reembolso["estado"] == "emitido"
    assert reembolso["numero"] in "\n".join(m["texto"] for m in r.json()["mensajes"])


def test_el_mismo_lote_dos_veces_no_cambia_nada_y_uno_cambiado_es_una_version_nueva(http, bd_url):
    clave = _clave(bd_url)
    lote = _lote({"tipo": "cliente", "id": CLIENTE, **_cliente()},
                 {"tipo": "producto", "sku": "ING-001", "nombre": "Jarra", "categoria": "menaje", "pvp": "9.5"},
                 {"tipo": "stock", "sku": "ING-001", "unidades": 7},
                 {"tipo": "pedido", "id": PEDIDO, **_pedido()},
                 {"tipo": "pedido", "id": "P-20261101-0002", **_pedido(estado="pendiente", enviado_en=None,
                                                                       entregado_en=None)})
    primero = http.post("/api/tienda/v1/lotes", content=lote, headers=_h(clave))
    assert primero.status_code == 200, primero.text
    assert primero.json()["creados"] == 5 and primero.json()["invalidos"] == 0
    antes = _foto(bd_url)
    versiones = uno(bd_url, "SELECT count(*) AS n FROM ingesta_versiones")
    segundo = http.post("/api/tienda/v1/lotes", content=lote, headers=_h(clave)).json()
    assert segundo == {"lineas": 5, "creados": 0, "actualizados": 0, "sin_cambios": 5, "invalidos": 0, "fallos": []}
    assert _foto(bd_url) == antes
    assert uno(bd_url, "SELECT count(*) AS n FROM ingesta_versiones") == versiones
    # El mismo pedido con el importe y la hora escritos de otra forma no cambia nada; otro precio, sí.
    igual = _pedido()
    igual["lineas"][1]["precio_unitario"] = "15"
    igual["fecha"] = datetime.fromisoformat(igual["fecha"]).astimezone(timezone(timedelta(hours=2))).isoformat()
    assert http.put(f"/api/tienda/v1/pedidos/{PEDIDO}", json=igual, headers=_h(clave)).json()["resultado"] == "sin_cambios"
    otro = _pedido()
    otro["lineas"][1]["precio_unitario"] = "14.00"
    r = http.put(f"/api/tienda/v1/pedidos/{PEDIDO}", json=otro, headers=_h(clave)).json()
    assert (r["resultado"], r["version"]) == ("actualizado", 2)
    (version,) = consultar(bd_url, "SELECT datos, recibida FROM ingesta_versiones WHERE id = %(p)s AND version = 2",
                  {"p": PEDIDO})
    assert version["datos"]["lineas"][1]["precio_unitario"] == "14.00" and version["recibida"] is not None


def test_un_registro_invalido_se_informa_con_su_linea_y_el_resto_se_aplica(http, bd_url):
    clave = _clave(bd_url)
    malo = _pedido()
    malo["lineas"][0]["precio_unitario"] = "24,90"
    lote = _lote({"tipo": "cliente", "id": CLIENTE, **_cliente()},
                 {"tipo": "cliente", "id": "C-0003", **_cliente()},  # de Madrid-Centro
                 {"tipo": "pedido", "id": "P-20261101-0003", **malo},
                 "{esto no es json",
                 {"tipo": "pedido", "id": PEDIDO, **_pedido()},
                 {"tipo": "pedido", "id": "P-20261101-0004", **_pedido(cliente_id="C-NADIE")},
                 {"tipo": "estado", "id": "P-20261101-0002", "estado": "enviado"})
    r = http.post("/api/tienda/v1/lotes", content=lote, headers=_h(clave))
    assert r.status_code == 200, r.text
    informe = r.json()
    assert (informe["creados"], informe["invalidos"]) == (2, 5)
    fallos = {f["linea"]: f for f in informe["fallos"]}
    assert fallos[2]["estado"] == 409 and fallos[2]["detalle"] == "id: el cliente C-0003 es de otra tienda"
    assert fallos[3]["estado"] == 422 and fallos[3]["campo"] == "lineas.0.precio_unitario"
    assert "dos decimales" in fallos[3]["detalle"]
    assert fallos[4]["estado"] == 422 and "JSON" in fallos[4]["detalle"]
    assert fallos[6]["estado"] == 409 and fallos[6]["campo"] == "cliente_id" and "no existe" in fallos[6]["detalle"]
    assert fallos[7]["estado"] == 404
    assert uno(bd_url, "SELECT tienda FROM clientes WHERE id = 'C-0003'") == "madrid-centro"
    # Ni medio registro: del pedido 0004 no queda nada (ni pedido, ni líneas, ni versión).
    assert [p["id"] for p in _foto(bd_url)] == [PEDIDO]
    assert uno(bd_url, "SELECT count(*) AS n FROM ingesta_registros WHERE id LIKE 'P-20261101-000%%' "
                       "AND id <> %(p)s", {"p": PEDIDO}) == 0


def test_una_linea_con_compensacion_no_se_quita_ni_cambia_de_precio_409(http, tok, bd_url):
    clave = _clave(bd_url)
    _ingerir(http, clave)
    cabeceras = cab(tok(CLIENTE, tienda=TIENDA))
    hilo = http.post("/api/conversaciones", headers=cabeceras).json()["thread_id"]
    http.post(f"/api/conversaciones/{hilo}/mensajes", headers=cabeceras,
              json={"texto": f"Quiero devolver la sartén del pedido {PEDIDO}"})
    assert uno(bd_url, "SELECT count(*) AS n FROM compensaciones_unidad WHERE pedido_id = %(p)s AND linea = 1",
               {"p": PEDIDO}) == 1
    antes = _foto(bd_url)
    sin_linea = _pedido()
    del sin_linea["lineas"][0]
    r = http.put(f"/api/tienda/v1/pedidos/{PEDIDO}", json=sin_linea, headers=_h(clave))
    assert r.status_code == 409, r.text
    assert "línea 1 tiene compensaciones" in r.json()["detalle"] and "quitar" in r.json()["detalle"]
    otro_precio = _pedido()
    otro_precio["lineas"][0]["precio_unitario"] = "20.00"
    r = http.put(f"/api/tienda/v1/pedidos/{PEDIDO}", json=otro_precio, headers=_h(clave))
    assert r.status_code == 409 and "precio" in r.json()["detalle"]
    # Entregado y reembolsado: no vuelve a pendiente (ni por el pedido ni por su estado).
    r = http.post(f"/api/tienda/v1/pedidos/{PEDIDO}/estado", json={"estado": "pendiente"}, headers=_h(clave))
    assert r.status_code == 409 and "no puede volver a pendiente" in r.json()["detalle"]
    assert _foto(bd_url) == antes
    # La línea sin compensar sí se puede cambiar.
    otra = _pedido()
    otra["lineas"][1]["unidades"] = 3
    assert http.put(f"/api/tienda/v1/pedidos/{PEDIDO}", json=otra, headers=_h(clave)).status_code == 200


def test_el_estado_enviado_y_entregado_con_fecha_es_idempotente(http, bd_url):
    clave = _clave(bd_url)
    http.put(f"/api/tienda/v1/clientes/{CLIENTE}", json=_cliente(), headers=_h(clave))
    http.put(f"/api/tienda/v1/pedidos/{PEDIDO}", headers=_h(clave),
             json=_pedido(estado="pendiente", enviado_en=None, entregado_en=None))
    salida, llegada = _hace(1), _hace(0.1)
    r = http.post(f"/api/tienda/v1/pedidos/{PEDIDO}/estado", json={"estado": "enviado", "fecha": salida},
                  headers=_h(clave))
    assert r.json()["resultado"] == "actualizado", r.text
    cuerpo = {"estado": "entregado", "fecha": llegada}
    assert http.post(f"/api/tienda/v1/pedidos/{PEDIDO}/estado", json=cuerpo, headers=_h(clave)).json()["resultado"] == "actualizado"
    assert http.post(f"/api/tienda/v1/pedidos/{PEDIDO}/estado", json=cuerpo, headers=_h(clave)).json()["resultado"] == "sin_cambios"
    (fila,) = consultar(bd_url, "SELECT estado, enviado_en, entregado_en FROM pedidos WHERE id = %(p)s", {"p": PEDIDO})
    assert fila["estado"] == "entregado"
    assert fila["enviado_en"] == datetime.fromisoformat(salida) and fila["entregado_en"] == datetime.fromisoformat(llegada)
    r = http.post("/api/tienda/v1/pedidos/P-20990101-0001/estado", json={"estado": "enviado"}, headers=_h(clave))
    assert r.status_code == 404


def test_una_clave_revocada_recibe_401_y_una_sin_el_alcance_403(http, bd_url, tok):
    clave = _clave(bd_url)
    solo_estados = _clave(bd_url, ["estados"])
    assert http.put(f"/api/tienda/v1/clientes/{CLIENTE}", json=_cliente(), headers=_h(clave)).status_code == 200
    r = http.put(f"/api/tienda/v1/clientes/{CLIENTE}", json=_cliente(), headers=_h(solo_estados))
    assert r.status_code == 403 and "clientes" in r.json()["detalle"]
    # En un lote, la línea sin alcance es un 403 y las demás se aplican.
    r = http.post("/api/tienda/v1/lotes", headers=_h(solo_estados),
                  content=_lote({"tipo": "cliente", "id": "C-9002", **_cliente()}))
    assert r.json()["fallos"][0]["estado"] == 403
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        revocar_clave(c, clave.split("_")[1])
    r = http.put(f"/api/tienda/v1/clientes/{CLIENTE}", json=_cliente(), headers=_h(clave))
    assert r.status_code == 401 and r.headers.get("www-authenticate")
    # Separadas de los tokens de personas: ni un token de cliente vale como clave ni al revés.
    assert http.put(f"/api/tienda/v1/clientes/{CLIENTE}", json=_cliente(),
                    headers=cab(tok("C-0001"))).status_code == 401
    assert http.get("/api/conversaciones", headers=_h(solo_estados)).status_code == 401
    assert uno(bd_url, "SELECT count(*) AS n FROM claves_api WHERE hash LIKE %(c)s", {"c": f"%{clave[-20:]}%"}) == 0


@pytest.mark.parametrize("campo, valor, esperado", [
    ("fecha", "2026-10-01T10:00:00", "fecha: le falta la zona horaria"),
    ("estado", "perdido", "estado: valor no permitido"),
    ("color", "rojo", "color: campo no admitido"),
])
def test_un_campo_mal_formado_es_422_en_espanol_con_el_campo(http, bd_url, campo, valor, esperado):
    clave = _clave(bd_url)
    r = http.put(f"/api/tienda/v1/pedidos/{PEDIDO}", json=_pedido(**{campo: valor}), headers=_h(clave))
    assert r.status_code == 422 and r.json()["detalle"].startswith(esperado), r.text


def test_un_lote_grande_pasa_del_limite_de_16_kib_y_uno_de_mas_de_8_mib_es_413(http, bd_url):
    clave = _clave(bd_url)
    pedidos = [{"tipo": "pedido", "id": f"P-20261102-{n:04d}", **_pedido()} for n in range(1000)]
    lote = _lote({"tipo": "cliente", "id": CLIENTE, **_cliente()}, *pedidos)
    assert len(lote) > 300 * 1024
    r = http.post("/api/tienda/v1/lotes", content=lote, headers={**_h(clave), "Content-Type": "application/x-ndjson"})
    assert r.status_code == 200, r.text
    assert (r.json()["creados"], r.json()["invalidos"]) == (1001, 0)
    assert uno(bd_url, "SELECT count(*) FROM lineas_pedido WHERE pedido_id LIKE 'P-20261102-%%'") == 2000
    enorme = lote * (8 * 1024 * 1024 // len(lote) + 1)
    r = http.post("/api/tienda/v1/lotes", content=enorme, headers=_h(clave))
    assert r.status_code == 413 and "8192 KiB" in r.json()["detalle"]
    # Las demás rutas siguen con 16 KiB.
    r = http.put(f"/api/tienda/v1/clientes/{CLIENTE}", content=b'{"nombre": "' + b"a" * 17_000 + b'"}',
                 headers={**_h(clave), "Content-Type": "application/json"})
    assert r.status_code == 413


# issue 39, punto 4: fechas extremas. La primera ni cabe en UTC (año 0); la segunda, tampoco
# (año 10000); la tercera cabe, pero las cuentas de plazos (entregado + días) desbordarían.
EXTREMAS = ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00", "9999-12-31T23:59:59Z", "0001-01-01T00:00:00Z"]


@pytest.mark.parametrize("extrema", EXTREMAS)
@pytest.mark.parametrize("campo", ["fecha", "enviado_en", "entregado_en"])
def test_una_fecha_extrema_en_un_pedido_es_422_con_el_campo_y_no_cambia_nada(http, bd_url, campo, extrema):
    clave = _clave(bd_url)
    _ingerir(http, clave)
    antes = _foto(bd_url)
    r = http.put(f"/api/tienda/v1/pedidos/{PEDIDO}", json=_pedido(**{campo: extrema}), headers=_h(clave))
    assert r.status_code == 422, r.text
    assert r.json()["detalle"] == f"{campo}: debe estar entre 1970-01-01 y 2099-12-31"
    assert _foto(bd_url) == antes


@pytest.mark.parametrize("extrema", EXTREMAS)
def test_una_fecha_extrema_en_un_cambio_de_estado_es_422_con_el_campo(http, bd_url, extrema):
    clave = _clave(bd_url)
    _ingerir(http, clave)
    r = http.post(f"/api/tienda/v1/pedidos/{PEDIDO}/estado", json={"estado": "entregado", "fecha": extrema},
                  headers=_h(clave))
    assert r.status_code == 422 and r.json()["detalle"].startswith("fecha: debe estar entre"), r.text


def test_un_lote_con_fechas_extremas_informa_esas_lineas_y_aplica_las_demas(http, bd_url):
    clave = _clave(bd_url)
    lote = _lote({"tipo": "cliente", "id": CLIENTE, **_cliente()},
                 {"tipo": "pedido", "id": "P-20261101-0005", **_pedido(fecha=EXTREMAS[0])},
                 {"tipo": "pedido", "id": PEDIDO, **_pedido()},
                 {"tipo": "estado", "id": PEDIDO, "estado": "entregado", "fecha": EXTREMAS[1]},
                 {"tipo": "pedido", "id": "P-20261101-0006", **_pedido(entregado_en=EXTREMAS[2])})
    r = http.post("/api/tienda/v1/lotes", content=lote, headers=_h(clave))
    assert r.status_code == 200, r.text
    informe = r.json()
    assert (informe["creados"], informe["invalidos"]) == (2, 3)
    assert [(f["linea"], f["estado"], f["campo"]) for f in informe["fallos"]] == [
        (2, 422, "fecha"), (4, 422, "fecha"), (5, 422, "entregado_en")]
    assert all("debe estar entre 1970-01-01 y 2099-12-31" in f["detalle"] for f in informe["fallos"])
    assert [p["id"] for p in _foto(bd_url)] == [PEDIDO]


@pytest.mark.parametrize("estado, falta", [("enviado", "enviado_en"), ("entregado", "entregado_en")])
def test_un_pedido_sin_la_fecha_que_su_estado_exige_es_422_con_el_campo(http, bd_url, estado, falta):
    """issue 39, punto 6: era un 409 (conflicto); es un dato que falta, 422 con el campo."""
    clave = _clave(bd_url)
    http.put(f"/api/tienda/v1/clientes/{CLIENTE}", json=_cliente(), headers=_h(clave))
    cuerpo = _pedido(estado=estado, **{falta: None})
    if estado == "enviado":
        cuerpo["entregado_en"] = None
    r = http.put(f"/api/tienda/v1/pedidos/{PEDIDO}", json=cuerpo, headers=_h(clave))
    assert r.status_code == 422, r.text
    assert r.json()["detalle"].startswith(f"{falta}: un pedido {estado} necesita su fecha")
    r = http.post("/api/tienda/v1/lotes", content=_lote({"tipo": "pedido", "id": PEDIDO, **cuerpo}), headers=_h(clave))
    assert [(f["estado"], f["campo"]) for f in r.json()["fallos"]] == [(422, falta)]
    assert _foto(bd_url) == []
