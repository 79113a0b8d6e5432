"""El webhook de Stripe por HTTP (``POST /api/pasarela/stripe/webhook``), con la app entera
configurada con ``AGENTE_PASARELA=stripe`` contra el servidor local de Stripe."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.apoyo.servidor_stripe import CLAVE, SECRETO_WEBHOOK, servidor_stripe
from tests.apoyo.web_util import abrir_conversacion, ajustes_web, cab, cliente_http, sql, token

SARTEN = "P-20260920-0102"
RUTA = "/api/pasarela/stripe/webhook"


@pytest.fixture
def stripe_local():
    with servidor_stripe() as servidor:
        servidor.pagos["pi_demo_p_20260920_0102"] = 2490
        servidor.estado_reembolsos = "pending"
        yield servidor


@pytest.fixture
def app_stripe(bd_url, stripe_local):
    ajustes = ajustes_web(bd_url, pasarela="stripe", stripe_clave=CLAVE,
                          stripe_secreto_webhook=SECRETO_WEBHOOK, stripe_api_base=stripe_local.base)
    with cliente_http(ajustes) as http:
        yield http, ajustes


def test_el_webhook_completa_el_reembolso_una_vez_y_rechaza_uno_falsificado(app_stripe, stripe_local, bd_url):
    http, ajustes = app_stripe
    hilo = abrir_conversacion(http, lambda s: token(ajustes, s), "C-0002")
    r = http.post(f"/api/conversaciones/{hilo}/mensajes", headers=cab(token(ajustes, "C-0002")),
                  json={"texto": f"Quiero devolver la sartén del pedido {SARTEN} porque se pega"})
    assert r.status_code == 200 and "pendiente" in r.json()["mensajes"][-1]["texto"]
    assert len(stripe_local.reembolsos) == 1

    (cuerpo, firma), _ = stripe_local.terminar_reembolso(next(iter(stripe_local.reembolsos)))
    falso = http.post(RUTA, content=cuerpo, headers={"Stripe-Signature": firma.replace("v1=", "v1=f"),
                                                     "Content-Type": "application/json"})
    assert falso.status_code == 400
    assert sql(bd_url, "SELECT estado FROM reembolsos")[0]["estado"] == "pendiente"

    cabeceras = {"Stripe-Signature": firma, "Content-Type": "application/json"}
    primero = http.post(RUTA, content=cuerpo, headers=cabeceras)
    duplicado = http.post(RUTA, content=cuerpo, headers=cabeceras)
    assert primero.status_code == duplicado.status_code == 200
    assert (primero.json()["resultado"], duplicado.json()["resultado"]) == ("aplicado", "repetido")
    assert sql(bd_url, "SELECT estado FROM reembolsos")[0]["estado"] == "emitido"
    historial = http.get(f"/api/conversaciones/{hilo}", headers=cab(token(ajustes, "C-0002"))).json()
    assert "Ya está hecho el reembolso" in historial["mensajes"][-1]["texto"]


def test_el_webhook_no_aparece_en_el_contrato_openapi(app_stripe):
    http, _ = app_stripe
    assert RUTA not in http.get("/openapi.json").json()["paths"]


def _enviar(http, evento) -> dict:
    cuerpo, firma = evento
    r = http.post(RUTA, content=cuerpo, headers={"Stripe-Signature": firma, "Content-Type": "application/json"})
    assert r.status_code == 200, r.text
    return r.json()


def test_un_reembolso_completado_que_stripe_da_despues_por_fallido_se_marca_se_avisa_y_se_audita(
        app_stripe, stripe_local, bd_url):
    """issue 39, punto 2: ``refund.updated`` con ``failed`` tras el ``succeeded`` no es «ya_estaba»."""
    from prometheus_client.parser import text_string_to_metric_families

    from agente.notificaciones.plantillas_cliente import pintar_cliente
    from tests.apoyo.procesos import cli_con_base

    http, ajustes = app_stripe
    hilo = abrir_conversacion(http, lambda s: token(ajustes, s), "C-0002")
    r = http.post(f"/api/conversaciones/{hilo}/mensajes", headers=cab(token(ajustes, "C-0002")),
                  json={"texto": f"Quiero devolver la sartén del pedido {SARTEN} porque se pega"})
    assert r.status_code == 200, r.text
    id_stripe = next(iter(stripe_local.reembolsos))
    hecho, _ = stripe_local.terminar_reembolso(id_stripe)
    assert _enviar(http, hecho)["resultado"] == "aplicado"
    assert sql(bd_url, "SELECT estado FROM reembolsos")[0]["estado"] == "emitido"

    # Días después, el banco devuelve el reembolso: Stripe lo pasa a failed y avisa dos veces.
    fallo, fallo_cargo = stripe_local.terminar_reembolso(id_stripe, "failed", motivo="expired_or_canceled_card")
    assert _enviar(http, fallo)["resultado"] == "fallo_tardio"
    assert _enviar(http, fallo_cargo)["resultado"] == "ya_estaba"
    # Un «succeeded» viejo que llega tarde no lo vuelve a dar por hecho.
    assert _enviar(http, stripe_local.evento("refund.updated", {**stripe_local.reembolsos[id_stripe],
                                                                "status": "succeeded"}))["resultado"] == "ya_estaba"

    # El libro dice la verdad y lo marca para una persona.
    (asiento,) = sql(bd_url, "SELECT numero, estado, requiere_persona, fallo_tardio_en, ultimo_error FROM reembolsos")
    assert (asiento["estado"], asiento["requiere_persona"]) == ("pendiente", True)
    assert asiento["fallo_tardio_en"] is not None and "expired_or_canceled_card" in asiento["ultimo_error"]

    # El cliente lo lee en su chat...
    historial = http.get(f"/api/conversaciones/{hilo}", headers=cab(token(ajustes, "C-0002"))).json()
    ultimo = historial["mensajes"][-1]["texto"]
    assert asiento["numero"] in ultimo and "todavía no te hemos devuelto ese dinero" in ultimo
    # ...y, como no tiene el chat abierto, por correo (uno por suceso, además del de «hecho»).
    correos = sql(bd_url, "SELECT datos FROM avisos_salida WHERE thread_id = %(h)s AND tipo = 'cliente' "
                          "AND datos->>'suceso' = 'fallo_tardio'", {"h": hilo})
    assert len(correos) == 1
    correo = pintar_cliente(correos[0]["datos"], enlace="https://x/", enlace_baja="https://x/baja", horas_enlace=24)
    assert "tu reembolso no se ha completado" in correo.asunto
    assert "todavía no te hemos devuelto ese dinero" in correo.texto

    # La cola de movimientos no lo reintenta: espera a una persona.
    peticiones = len(stripe_local.peticiones)
    sql(bd_url, "UPDATE reembolsos SET proximo_intento = now() - interval '1 day' RETURNING id")
    assert http.app.state.servicio.completar_movimientos(solo_vencidos=False).completados == ()
    assert len(stripe_local.peticiones) == peticiones

    # /metrics y `agente auditoria` lo enseñan.
    metricas = {m.labels["comprobacion"]: m.value
                for familia in text_string_to_metric_families(http.get("/metrics").text)
                for m in familia.samples if m.name == "agente_auditoria_hallazgos"}
    assert metricas["fallos_tardios"] == 1 and metricas["marcados"] == 0
    auditoria = cli_con_base(bd_url, "auditoria")
    assert auditoria.returncode == 1, auditoria.stdout + auditoria.stderr
    assert "dio por hechos y después por fallidos: 1" in auditoria.stdout
    assert "fallo_tardio_en_el_proveedor" in auditoria.stdout


def _firmado(cuerpo: bytes, *, marca: int | None = None) -> dict[str, str]:
    from tests.apoyo.servidor_stripe import firmar

    return {"Stripe-Signature": firmar(cuerpo, SECRETO_WEBHOOK, marca), "Content-Type": "application/json"}


def _reembolso_nuestro(**cambios) -> dict:
    return {"id": "re_x", "object": "refund", "amount": 2490, "status": "succeeded", "created": 1_700_000_000,
            "metadata": {"referencia": "RE-000001", "origen": "agente"}, **cambios}


@pytest.mark.parametrize("cuerpo", [
    b"[1, 2, 3]",
    b'"un texto"',
    b"null",
    json.dumps({"object": "event", "type": "refund.updated", "data": {"object": {}}}).encode(),
    json.dumps({"id": "evt_1", "type": "refund.updated", "data": "nada"}).encode(),
    json.dumps({"id": ["evt_1"], "type": "refund.updated", "data": {"object": {}}}).encode(),
    json.dumps({"id": "evt_1\u0000", "type": "refund.updated", "data": {"object": {}}}).encode(),
    json.dumps({"id": "evt_1", "type": "refund.updated",
                "data": {"object": _reembolso_nuestro(amount="mucho")}}).encode(),
    json.dumps({"id": "evt_1", "type": "refund.updated",
                "data": {"object": _reembolso_nuestro(created=10**30)}}).encode(),
    json.dumps({"id": "evt_1", "type": "refund.updated",
                "data": {"object": _reembolso_nuestro(status=["failed"])}}).encode(),
    json.dumps({"id": "evt_1", "type": "refund.updated",
                "data": {"object": _reembolso_nuestro(metadata={"origen": "agente", "referencia": {"a": 1}})}}).encode(),
], ids=["lista", "texto", "null", "sin_id", "data_no_objeto", "id_lista", "id_con_nulo", "importe_texto",
        "fecha_enorme", "estado_lista", "referencia_objeto"])
def test_un_evento_firmado_con_el_secreto_pero_mal_formado_es_400_y_no_toca_nada(app_stripe, bd_url, cuerpo):
    http, _ = app_stripe
    r = http.post(RUTA, content=cuerpo, headers=_firmado(cuerpo))
    assert r.status_code == 400, r.text
    assert r.json()["detalle"]
    assert sql(bd_url, "SELECT count(*) AS n FROM pasarela_eventos")[0]["n"] == 0


def test_un_evento_firmado_en_el_futuro_mas_alla_de_la_tolerancia_es_400(app_stripe, stripe_local, bd_url):
    import time

    http, ajustes = app_stripe
    ahora = int(time.time())
    cuerpo, _ = stripe_local.evento("refund.updated", _reembolso_nuestro())
    aceptado = cuerpo
    r = http.post(RUTA, content=cuerpo, headers=_firmado(cuerpo, marca=ahora + 28 * 3600))
    assert r.status_code == 400 and "futuro" in r.json()["detalle"], r.text
    assert sql(bd_url, "SELECT count(*) AS n FROM pasarela_eventos")[0]["n"] == 0
    # Dentro de la tolerancia (un reloj un poco adelantado) se acepta.
    r = http.post(RUTA, content=cuerpo, headers=_firmado(cuerpo, marca=ahora + ajustes.stripe_tolerancia_webhook // 2))
    assert r.status_code == 200, r.text
    # Un «created» del evento en el futuro, aunque la firma sea de ahora, tampoco.
    futuro = json.loads(cuerpo)
    futuro.update(id="evt_futuro", created=ahora + 28 * 3600)
    cuerpo = json.dumps(futuro).encode()
    r = http.post(RUTA, content=cuerpo, headers=_firmado(cuerpo))
    assert r.status_code == 400 and "futuro" in r.json()["detalle"], r.text
    assert [f["id"] for f in sql(bd_url, "SELECT id FROM pasarela_eventos")] == [json.loads(aceptado)["id"]]


# Valores hostiles de todos los tipos: enormes, negativos, NaN, textos largos, unicode, el nulo...
_HOSTILES = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(10**40), max_value=10**40)
    | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=300)
    | st.sampled_from(["", "\u0000", "0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00", "x" * 5000,
                       "RE-000001", "failed", "succeeded", "canceled", "pending", "🙂" * 50]),
    lambda hijos: st.lists(hijos, max_size=4) | st.dictionaries(st.text(max_size=10), hijos, max_size=4),
    max_leaves=12,
)


def _evento_hostil():
    objeto = st.fixed_dictionaries(
        {"object": st.sampled_from(["refund", "checkout.session"]) | _HOSTILES,
         "metadata": st.fixed_dictionaries({"origen": st.just("agente") | _HOSTILES,
                                            "referencia": st.just("RE-000001") | _HOSTILES}) | _HOSTILES},
        optional={k: _HOSTILES for k in ("id", "amount", "amount_total", "status", "payment_status", "created",
                                          "expires_at", "url", "failure_reason")})
    evento = st.fixed_dictionaries(
        {"id": st.text(min_size=1, max_size=20).map(lambda t: f"evt_{t}") | _HOSTILES,
         "type": st.sampled_from(["refund.updated", "charge.refund.updated", "checkout.session.completed",
                                  "checkout.session.async_payment_failed", "checkout.session.expired"]) | _HOSTILES,
         "data": st.fixed_dictionaries({"object": objeto | _HOSTILES}) | _HOSTILES},
        optional={"created": _HOSTILES})
    return evento | _HOSTILES


def test_ningun_evento_firmado_hostil_da_500(app_stripe):
    """Schemathesis no ve el webhook (no está en el OpenAPI: su contrato es el de Stripe); esta
    prueba hace su papel con cuerpos firmados con el secreto de verdad: 200 o 400, nunca 500."""
    http, _ = app_stripe

    @given(evento=_evento_hostil())
    @settings(max_examples=300, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    def probar(evento):
        cuerpo = json.dumps(evento).encode()
        r = http.post(RUTA, content=cuerpo, headers=_firmado(cuerpo))
        assert r.status_code in (200, 400), (r.status_code, r.text, cuerpo[:500])

    probar()


def test_schemathesis_con_todas_las_comprobaciones_no_encuentra_nada_en_el_webhook_firmado(bd_url, stripe_local):
    """El webhook no está en el OpenAPI de la API (su contrato es el de Stripe): aquí se le da
    uno mínimo con la forma de un evento y Schemathesis lo prueba con todas sus comprobaciones,
    datos válidos y no válidos, contra el servidor de verdad, firmando cada cuerpo tal como sale
    (una sesión que pone ``Stripe-Signature`` sobre los bytes enviados). Un evento con su forma
    es 200 (ajeno a nuestros movimientos); lo demás, 400; nunca un 500."""
    import requests
    import schemathesis
    from schemathesis.checks import CHECKS

    from agente.web.app import crear_app
    from tests.apoyo.contrato import probar_operaciones
    from tests.apoyo.servidor_stripe import firmar
    from tests.apoyo.web_util import servidor_en_hilo

    class Firmante(requests.Session):
        def send(self, peticion, **kwargs):
            cuerpo = peticion.body or b""
            peticion.headers["Stripe-Signature"] = firmar(
                cuerpo if isinstance(cuerpo, bytes) else cuerpo.encode(), SECRETO_WEBHOOK)
            return super().send(peticion, **kwargs)

    # Ningún texto con el carácter nulo (ni en las claves): PostgreSQL no lo guarda y la puerta
    # del cuerpo lo rechaza en toda la API (aquí, con 400).
    sin_nulo = "^[^\\u0000]*$"
    valor = {"$ref": "#/components/schemas/Valor"}

    def objeto(**propiedades) -> dict:
        return {"type": "object", "required": list(propiedades), "properties": propiedades,
                "propertyNames": {"pattern": sin_nulo}, "additionalProperties": valor}

    texto = {"type": "string", "pattern": "^[^\\u0000]{1,255}$"}
    error = {"description": "no vale", "content": {"application/json": {"schema": {
        "type": "object", "required": ["detalle"], "properties": {"detalle": {"type": "string"}}}}}}
    contrato = {
        "openapi": "3.1.0", "info": {"title": "webhook de Stripe", "version": "1"},
        "components": {"schemas": {"Valor": {"anyOf": [
            {"type": ["null", "boolean", "number"]}, {"type": "string", "pattern": sin_nulo},
            {"type": "array", "items": valor},
            {"type": "object", "propertyNames": {"pattern": sin_nulo}, "additionalProperties": valor}]}}},
        "paths": {RUTA: {"post": {
            "requestBody": {"required": True, "content": {"application/json": {"schema": objeto(
                id=texto, type=texto, data=objeto(object=objeto()))}}},
            "responses": {
                "200": {"description": "aplicado o apuntado", "content": {"application/json": {"schema": {
                    "type": "object", "required": ["evento", "tipo", "resultado"],
                    "properties": {"evento": {"type": "string"}, "tipo": {"type": "string"},
                                   "referencia": {"type": ["string", "null"]}, "resultado": {"type": "string"}}}}}},
                "400": error, "413": error}}}},
    }
    ajustes = ajustes_web(bd_url, pasarela="stripe", stripe_clave=CLAVE, stripe_secreto_webhook=SECRETO_WEBHOOK,
                          stripe_api_base=stripe_local.base)
    estados = set()
    with servidor_en_hilo(crear_app(ajustes)) as base, Firmante() as sesion:
        def llamar(case):
            respuesta = case.call_and_validate(base_url=base, session=sesion, checks=CHECKS.get_all(), timeout=60)
            estados.add(respuesta.status_code)

        operacion = next(schemathesis.openapi.from_dict(contrato).get_all_operations()).ok()
        fallos = probar_operaciones([operacion], llamar, ejemplos=60)
    assert fallos == [], "\n\n".join(fallos)
    assert {200, 400} <= estados, estados
