"""Vale de compensación (issue 27): cada historia de la demo por la API HTTP con el modelo offline.

P-20261012-0099 (C-0003, Madrid-Centro, entregado hace 2 días, una línea de 99,00 EUR):
«llegó con un arañazo, no quiero devolverlo» da un vale de 9,90 EUR sin firma; pedir 30 EUR
espera a un encargado, que lo aprueba o lo baja. Se comprueba la base (vale, libro, pasarela),
lo que lee el cliente, la tarjeta, el historial y su CSV, y la auditoría (un vale que
necesitaba firma y salió sin ella).
"""

# ruff: noqa: F811 - las fixtures importadas de otro módulo de pruebas se piden por nombre
from __future__ import annotations

import csv
import io
import re
from datetime import date, timedelta
from decimal import Decimal

import psycopg
import pytest

from agente.bd.pool import KWARGS_CONEXION
from agente.servicio.auditoria.informe import informe
from nucleo.contexto import ContextoCliente
from nucleo.errores import ConflictoIdempotencia, ErrorDominio
from operaciones.vale.herramienta import compensar_con_vale
from operaciones.vale.regla import importe_automatico
from politicas import PoliticaAprobacion
from tests.apoyo.fabricas import consultar, crear_pedido, uno
from tests.apoyo.web_util import cab

PEDIDO = "P-20261012-0099"
CLIENTE = "C-0003"
ENCARGADO = "enc-madrid-centro"
ARANAZO = f"El pedido {PEDIDO} llegó con un arañazo, no quiero devolverlo"
TREINTA = f"Quiero un vale de 30 euros por el pedido {PEDIDO}, llegó con un arañazo"
RE_CODIGO = re.compile(r"\bVA-\d{10}\b")


def _hablar(http, tok, texto: str, cliente: str = CLIENTE, hilo: str | None = None) -> tuple[str, dict]:
    if hilo is None:
        r = http.post("/api/conversaciones", headers=cab(tok(cliente)))
        assert r.status_code == 201, r.text
        hilo = r.json()["thread_id"]
    r = http.post(f"/api/conversaciones/{hilo}/mensajes", json={"texto": texto}, headers=cab(tok(cliente)))
    assert r.status_code == 200, r.text
    return hilo, r.json()


def _texto(cuerpo: dict) -> str:
    return "\n".join(m["texto"] for m in cuerpo["mensajes"])


def _sin_internos(texto: str) -> None:
    """Lo que lee el cliente: nunca SKUs, ids de cliente ni nombres de herramientas."""
    assert "VAJ-001" not in texto and CLIENTE not in texto
    assert "compensar_con_vale" not in texto and "consultar_pedido" not in texto


def _vales(bd_url: str) -> list[dict]:
    return consultar(bd_url, "SELECT numero, pedido_id, linea, cliente_id, tienda, importe, estado, caduca, "
                             "aprobado_por, motivo FROM vales ORDER BY id")


def _args(http, tok, hilo: str) -> dict:
    """Los argumentos propuestos de la única acción pendiente del hilo."""
    tarjeta = http.get(f"/api/aprobaciones/{hilo}", headers=cab(tok(ENCARGADO))).json()
    return tarjeta["acciones"][0]["args"]


def _decidir(http, tok, hilo: str, decision: dict, quien: str = ENCARGADO):
    r = http.post(f"/api/aprobaciones/{hilo}/decision", json={"decisiones": [decision]}, headers=cab(tok(quien)))
    assert r.status_code == 200, r.text
    return r.json()


def test_arañazo_sin_devolver_da_un_vale_de_9_90_sin_firma(http, tok, bd_url):
    hilo, cuerpo = _hablar(http, tok, ARANAZO)
    assert cuerpo["estado"] == "respondida"
    (vale,) = _vales(bd_url)
    assert (vale["pedido_id"], vale["linea"], vale["cliente_id"], vale["tienda"]) == (PEDIDO, 1, CLIENTE,
                                                                                      "madrid-centro")
    assert (vale["importe"], vale["estado"], vale["aprobado_por"]) == (Decimal("9.90"), "emitido", None)
    assert vale["caduca"] == date.today() + timedelta(days=365)  # el defecto de la tienda
    assert RE_CODIGO.fullmatch(vale["numero"])
    assert "arañazo" in vale["motivo"]
    # Un pasivo: ni reembolso, ni cobro, ni unidades ocupadas en el libro.
    assert uno(bd_url, "SELECT count(*) FROM reembolsos") == 0
    assert uno(bd_url, "SELECT count(*) FROM cobros") == 0
    assert uno(bd_url, "SELECT unidades_libres FROM libro_lineas WHERE pedido_id = %(p)s", {"p": PEDIDO}) == 1
    assert consultar(bd_url, "SELECT vales, importe FROM vales_pasivo") == [
        {"vales": 1, "importe": Decimal("9.90")}]
    veredicto = consultar(bd_url, "SELECT requiere_encargado, umbrales FROM evaluaciones_politica "
                                  "WHERE herramienta = 'compensar_con_vale'")[0]
    assert veredicto["requiere_encargado"] is False and veredicto["umbrales"]["automatico"] == "9.90"

    texto = _texto(cuerpo)
    assert vale["numero"] in texto and "9,90 EUR" in texto and PEDIDO in texto
    assert vale["caduca"].strftime("%d/%m/%Y") in texto and "no tienes que devolver nada" in texto
    _sin_internos(texto)
    assert http.get("/api/aprobaciones", headers=cab(tok(ENCARGADO))).json() == []
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        assert informe(c)["sin_firma"] == []


def test_pedir_30_euros_espera_al_encargado_que_lo_aprueba(http, tok, bd_url):
    hilo, cuerpo = _hablar(http, tok, TREINTA)
    assert cuerpo["estado"] == "esperando_aprobacion"
    texto = _texto(cuerpo)
    assert f"el vale de compensación de 30,00 EUR por el pedido {PEDIDO}" in texto
    _sin_internos(texto)
    assert _vales(bd_url) == []

    tarjeta = http.get(f"/api/aprobaciones/{hilo}", headers=cab(tok(ENCARGADO))).json()
    (accion,) = tarjeta["acciones"]
    assert accion["titulo"] == "Vale de compensación"
    assert "Importe del vale: 30,00 EUR." in accion["descripcion"]
    assert [(c["campo"], c["dinero"]) for c in accion["campos"]] == [
        ("pedido", False), ("linea", False), ("importe", True), ("motivo", False)]
    assert accion["motivos"] == [
        "vale de 30,00 EUR: sin firma, como mucho 9,90 EUR (el 10 % de la línea, 99,00 EUR, hasta 10,00 EUR)"]
    assert (tarjeta["requisito"]["rol_minimo"], tarjeta["requisito"]["importe"]) == ("encargado", "30.00")

    final = _decidir(http, tok, hilo, {"type": "approve"})
    assert final["estado"] == "aplicada"
    (vale,) = _vales(bd_url)
    assert (vale["importe"], vale["aprobado_por"]) == (Decimal("30.00"), ENCARGADO)
    assert vale["numero"] in final["mensaje_cliente"] and "30,00 EUR" in final["mensaje_cliente"]
    _sin_internos(final["mensaje_cliente"])
    # Historial de decisiones y su CSV, por la declaración (importe del vale).
    (decision,) = http.get("/api/decisiones", headers=cab(tok(ENCARGADO))).json()["decisiones"]
    assert [(a["nombre"], a["pedido"], a["importe_propuesto"], a["importe_final"]) for a in decision["acciones"]] == [
        ("compensar_con_vale", PEDIDO, "30.00", "30.00")]
    filas = list(csv.DictReader(io.StringIO(http.get("/api/decisiones.csv?formato=maquina", headers=cab(tok(ENCARGADO))).text)))
    assert [(f["decision"], f["pedido"]) for f in filas] == [("approve", PEDIDO)]
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        assert informe(c)["sin_firma"] == []


def test_el_encargado_baja_el_importe_y_el_cliente_lee_lo_emitido(http, tok, bd_url):
    hilo, _ = _hablar(http, tok, TREINTA)
    editar = {"type": "edit", "edited_action": {"name": "compensar_con_vale",
                                                "args": {**_args(http, tok, hilo), "importe": "15.00"}}}
    final = _decidir(http, tok, hilo, editar)
    assert final["estado"] == "aplicada"
    (vale,) = _vales(bd_url)
    assert (vale["importe"], vale["aprobado_por"]) == (Decimal("15.00"), ENCARGADO)
    assert "ajustado" in final["mensaje_cliente"] and "15,00 EUR" in final["mensaje_cliente"]
    assert "30,00" not in final["mensaje_cliente"] and vale["numero"] in final["mensaje_cliente"]
    # Subir no se puede: lo propuesto es el techo.
    hilo2, _ = _hablar(http, tok, TREINTA.replace("30", "20"), cliente=CLIENTE)
    subir = {"type": "edit", "edited_action": {"name": "compensar_con_vale",
                                               "args": {**_args(http, tok, hilo2), "importe": "25.00"}}}
    r = http.post(f"/api/aprobaciones/{hilo2}/decision", json={"decisiones": [subir]}, headers=cab(tok(ENCARGADO)))
    assert r.status_code == 409 and "supera lo que pidió el cliente" in r.json()["detalle"]


def test_rechazado_no_emite_nada_y_el_cliente_lo_sabe(http, tok, bd_url):
    hilo, _ = _hablar(http, tok, TREINTA)
    final = _decidir(http, tok, hilo, {"type": "reject", "message": "el arañazo no justifica tanto"})
    assert _vales(bd_url) == []
    assert "no ha aprobado el vale" in final["mensaje_cliente"] and "ningún vale" in final["mensaje_cliente"]


def test_un_segundo_vale_en_90_dias_pide_firma_aunque_sea_pequeño(http, tok, bd_url):
    _hablar(http, tok, ARANAZO)
    otro = crear_pedido(bd_url, CLIENTE, [("ILU-004", 1)], dias_entrega=2)  # 9,90 EUR
    hilo, cuerpo = _hablar(http, tok, f"El pedido {otro} llegó con una bombilla rayada, no quiero devolverlo")
    assert cuerpo["estado"] == "esperando_aprobacion"
    tarjeta = http.get(f"/api/aprobaciones/{hilo}", headers=cab(tok(ENCARGADO))).json()
    assert tarjeta["acciones"][0]["motivos"] == ["el cliente ya recibió 1 vale en los últimos 90 días"]
    assert len(_vales(bd_url)) == 1


def test_un_pedido_sin_entregar_no_da_vale_ni_pasa_por_nadie(http, tok, bd_url):
    _, cuerpo = _hablar(http, tok, "Del pedido P-20260925-0150, ¿me compensáis con algo?", cliente="C-0004")
    assert cuerpo["estado"] == "respondida"
    texto = _texto(cuerpo)
    assert "aún no se ha entregado" in texto and "ILU-001" not in texto
    assert _vales(bd_url) == []
    assert http.get("/api/aprobaciones", headers=cab(tok(ENCARGADO))).json() == []


def test_idempotente_por_llamada_y_la_misma_llamada_con_otros_datos_es_conflicto(pool, bd_url):
    ctx = ContextoCliente(cliente_id=CLIENTE, tienda="madrid-centro", nombre="Carmen Ruiz Gómez")
    args = {"pedido": PEDIDO, "linea": 1, "importe": "9.90", "motivo": "arañazo"}
    primero = compensar_con_vale(pool, contexto=ctx, thread_id="h-1", tool_call_id="call-1", **args)
    segundo = compensar_con_vale(pool, contexto=ctx, thread_id="h-1", tool_call_id="call-1", **args)
    assert primero["repetido"] is False and segundo["repetido"] is True
    assert segundo["vale"] == primero["vale"] and len(_vales(bd_url)) == 1
    with pytest.raises(ConflictoIdempotencia, match=primero["vale"]):
        compensar_con_vale(pool, contexto=ctx, thread_id="h-1", tool_call_id="call-1", **{**args, "importe": "5.00"})
    # Nunca más de lo pagado por la línea, ni de una línea que no existe.
    with pytest.raises(ErrorDominio, match="lo pagado por la línea"):
        compensar_con_vale(pool, contexto=ctx, thread_id="h-1", tool_call_id="call-2", **{**args, "importe": "99.01"})
    with pytest.raises(ErrorDominio, match="no tiene la línea 2"):
        compensar_con_vale(pool, contexto=ctx, thread_id="h-1", tool_call_id="call-3", **{**args, "linea": 2})
    assert len(_vales(bd_url)) == 1


def test_la_auditoria_ve_un_vale_que_necesitaba_firma_y_salio_sin_ella(http, tok, bd_url):
    hilo, _ = _hablar(http, tok, TREINTA)
    (llamada,) = consultar(bd_url, "SELECT tool_call_id FROM evaluaciones_politica "
                                   "WHERE herramienta = 'compensar_con_vale' AND requiere_encargado")
    # Alguien escribe el vale de la pausa a mano, sin que nadie lo firme.
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        c.execute("INSERT INTO vales (numero, clave_idempotencia, thread_id, tool_call_id, pedido_id, linea, "
                  "cliente_id, tienda, importe, motivo, caduca) VALUES ('VA-0000000001', 'a-mano', %s, %s, %s, 1, "
                  "%s, 'madrid-centro', 30.00, 'a mano', current_date + 365)",
                  (hilo, llamada["tool_call_id"], PEDIDO, CLIENTE))
        hallados = informe(c)["sin_firma"]
    assert [(e["tipo"], e["numero"], e["importe"], e["requiere_encargado"]) for e in hallados] == [
        ("vale", "VA-0000000001", Decimal("30.00"), True)]


def test_un_vale_deja_ver_el_reembolso_posterior_del_mismo_pedido(pool, bd_url):
    """El vale no ocupa la unidad; reembolsarla después por lo mismo lo mira una persona."""
    pedido = crear_pedido(bd_url, CLIENTE, [("ILU-004", 1)], dias_entrega=2)  # 9,90 EUR
    ctx = ContextoCliente(cliente_id=CLIENTE, tienda="madrid-centro", nombre="Carmen Ruiz Gómez")
    politica = PoliticaAprobacion(pool=pool, reglas={"reembolsar": "reembolso"})
    args = {"pedido": pedido, "importe": "9.90", "motivo": "rayada"}
    antes = politica.evaluar(thread_id="h-r", tool_call_id="r-1", herramienta="reembolsar", args=args, contexto=ctx)
    assert antes.requiere_encargado is False
    compensar_con_vale(pool, contexto=ctx, thread_id="h-v", tool_call_id="v-1", pedido=pedido, linea=1,
                       importe="0.99", motivo="rayada")
    despues = politica.evaluar(thread_id="h-r", tool_call_id="r-2", herramienta="reembolsar", args=args, contexto=ctx)
    assert despues.requiere_encargado is True
    assert "el pedido ya tuvo 1 vale de compensación" in despues.motivos


def test_el_maximo_automatico_es_el_menor_de_porcentaje_e_importe():
    assert importe_automatico(Decimal("99.00"), 10, Decimal("10.00")) == Decimal("9.90")
    assert importe_automatico(Decimal("250.00"), 10, Decimal("10.00")) == Decimal("10.00")
    assert importe_automatico(Decimal("9.99"), 15, Decimal("10.00")) == Decimal("1.49")  # a la baja
    assert importe_automatico(Decimal("99.00"), 0, Decimal("10.00")) == Decimal("0.00")
