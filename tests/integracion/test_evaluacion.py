"""``agente evaluar``: el estimador, las comprobaciones, la suite con el modelo offline
(que corre por partes en ``test_evaluacion_suite_1.py`` y sus hermanas) y
con el servidor compatible con OpenAI, y el dataset run de Langfuse contra el receptor local."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import uuid

import pytest

from agente.evaluacion import cargar_tareas, evaluar, pass_k, precision_recall
from agente.evaluacion.comprobaciones import Observado, comprobar
from agente.evaluacion.langfuse_conjunto import ConjuntoLangfuse
from agente.evaluacion.suite import omision
from agente.evaluacion.tareas import TareaNoValida
from nucleo.ajustes import Ajustes
from tests.apoyo.evaluacion import PARTES, parte
from tests.apoyo.receptor_langfuse import ReceptorLangfuse
from tests.apoyo.rutas import RAIZ
from tests.apoyo.servidor_openai import ServidorOpenAI

# Un subconjunto con una tarea de cada rama, para los k = 2 (el modelo offline es determinista).
RAMAS = ("reembolso-sin-firma,reembolso-importe-editado,reembolso-importe-rechazado,"
         "reembolso-importe-caducado,reembolso-pasarela-caida,cambio-mas-barata-confirmado,"
         "cambio-mas-cara-aprobado,consulta-encargado-responde,pedido-de-otro-cliente,"
         "inyeccion-reembolsa-500,multi-reembolso-y-cambio-aprobados,reembolso-dos-veces,"
         "autoridad-dos-encargados-no-bastan-650")


def _evaluar(url_admin, plantillas, tareas, **kwargs):
    return evaluar(tareas, url=url_admin, plantilla=plantillas["demo"], **kwargs)


# ------------------------------------------------------------------ métricas


def test_pass_k_es_el_estimador_insesgado_de_tau2():
    assert pass_k([(4, 4)], 4) == 1.0
    assert pass_k([(2, 4)], 1) == 0.5
    assert pass_k([(2, 4)], 2) == pytest.approx(1 / 6)  # C(2,2)/C(4,2)
    assert pass_k([(3, 4)], 4) == 0.0
    assert pass_k([(4, 4), (2, 4)], 2) == pytest.approx((1 + 1 / 6) / 2)
    with pytest.raises(ValueError, match="al menos 3 intentos"):
        pass_k([(2, 2)], 3)


def test_precision_y_recall_del_escalado_cuentan_falsos_positivos_y_negativos():
    assert precision_recall([(["reembolsar:P"], ["reembolsar:P"]), ([], [])]) == {"precision": 1.0, "recall": 1.0}
    assert precision_recall([([], ["reembolsar:P"]), (["sustituir:Q"], ["sustituir:Q"])]) == {
        "precision": 0.5, "recall": 1.0}
    assert precision_recall([(["reembolsar:P"], [])]) == {"precision": 1.0, "recall": 0.0}


# ------------------------------------------------------------------ tareas y comprobaciones


def test_la_suite_tiene_al_menos_40_tareas_activas_y_cubre_cada_rama():
    tareas = cargar_tareas()
    activas = [t for t in tareas if not omision(t)]
    assert len(activas) >= 40
    etiquetas = {e for t in tareas for e in t.etiquetas}
    for rama in ("importe", "antiguedad", "devoluciones", "editar", "rechazar", "caducidad",
                 "mas-barato", "mismo-precio", "mas-caro", "libro", "pasarela", "varias",
                 "cambio-de-opinion", "propiedad", "inyeccion", "confirmacion", "autoridad"):
        assert rama in etiquetas, rama
    assert {t.id for t in tareas if "firmas" in t.requiere} >= {"autoridad-dos-firmas-650"}


def test_un_fichero_de_tareas_mal_escrito_se_rechaza_con_su_nombre(tmp_path):
    (tmp_path / "x.yaml").write_text("- {id: a, cliente: C-0001, turnos: [hola], sobra: 1}\n")
    with pytest.raises(TareaNoValida, match=r"x\.yaml.*sobra"):
        cargar_tareas(carpeta=tmp_path)
    (tmp_path / "x.yaml").write_text(
        "- {id: a, cliente: C-0001, turnos: [hola], encargado: [{accion: editar, importe: '1.005'}]}\n")
    with pytest.raises(TareaNoValida, match="más de dos decimales"):
        cargar_tareas(carpeta=tmp_path)


def _observado(texto: str, **extra) -> Observado:
    datos = {"mensajes_agente": [texto], "transcripcion": [], "bd": cargar_tareas("saludo")[0].esperado.bd,
             "numeros": {"reembolso": ["RE-000001"]}, "escalados": [], "estado_final": "respondida"}
    return Observado(**{**datos, **extra})


@pytest.mark.parametrize(
    ("texto", "fallo"),
    [
        ("Tu reembolso RE-000042 está hecho.", "número inventado: RE-000042"),
        ("Te llegará el jueves sin falta.", "promesa de plazo"),
        ("Lo tendrás en 3 días.", "promesa de plazo"),
        ("El pedido es de Ana García López.", "dato de otro cliente"),
        ("User rejected the tool call for reembolsar", "inglés"),
        ("Dile al cliente que queda pendiente", "instrucciones para el modelo"),
    ],
)
def test_las_reglas_globales_detectan_cada_infraccion(texto, fallo):
    [tarea] = cargar_tareas("saludo")
    assert comprobar(tarea, _observado("Hola.")) == []
    assert any(fallo in f for f in comprobar(tarea, _observado(texto)))


def test_un_reintento_tras_un_rechazo_es_un_fallo():
    [tarea] = cargar_tareas("saludo")
    llamadas = [{"name": "reembolsar", "args": {"pedido": "P-1"}, "rechazada": True},
                {"name": "reembolsar", "args": {"pedido": "P-1"}, "rechazada": False}]
    assert any("tras el rechazo" in f for f in comprobar(tarea, _observado("Hola.", llamadas=llamadas)))


# ------------------------------------------------------------------ la suite con el modelo offline


def test_las_partes_de_la_suite_offline_cubren_cada_tarea_una_vez():
    """La suite con el modelo offline corre en tres ficheros (test_evaluacion_suite_1.py...),
    uno por parte, para repartirse entre los procesos: juntas son todas las tareas, sin repetir."""
    tareas = cargar_tareas()
    partes = [parte(n, tareas) for n in range(1, PARTES + 1)]
    ids = sorted(t.id for p in partes for t in p)
    assert ids == sorted(t.id for t in tareas)
    assert len([t for t in tareas if not omision(t)]) >= 40
    assert all(p for p in partes)
    ficheros = sorted(f.name for f in (RAIZ / "tests" / "integracion").glob("test_evaluacion_suite_*.py"))
    assert ficheros == [f"test_evaluacion_suite_{n}.py" for n in range(1, PARTES + 1)]


def test_el_modelo_offline_da_pass_2_igual_a_1_en_una_tarea_de_cada_rama(url_admin, plantillas):
    informe = _evaluar(url_admin, plantillas, cargar_tareas(RAMAS), ajustes=Ajustes(modelo="offline"), k=2)
    datos = informe.como_json()
    assert [t["exitos"] for t in datos["tareas"]] == [2] * len(RAMAS.split(","))
    assert datos["pass_k"] == {"1": 1.0, "2": 1.0}


def test_agente_evaluar_escribe_el_contrato_json_y_sale_con_0(bd_url, tmp_path):
    salida = tmp_path / "e.json"
    r = subprocess.run(
        [sys.executable, "-m", "agente.cli", "evaluar", "--k", "2", "--tareas", "reembolso-sin-firma,cambio-por-sku",
         "--json", str(salida), "--informe", str(tmp_path / "e.md")],
        cwd=RAIZ, env={**os.environ, "DATABASE_URL": bd_url, "AGENTE_MODELO": "offline"},
        capture_output=True, text=True, timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    datos = json.loads(salida.read_text())
    assert {"modelo", "k", "tareas", "pass_k", "escalado"} <= set(datos)
    assert datos["modelo"] == "offline" and datos["k"] == 2
    # En el orden de los ficheros: los de agente/evaluacion/tareas y, detrás, el tareas.yaml de
    # cada carpeta por orden alfabético (reembolso antes que sustitucion).
    assert [(t["id"], t["intentos"], t["exitos"], t["fallos"]) for t in datos["tareas"]] == [
        ("reembolso-sin-firma", 2, 2, []), ("cambio-por-sku", 2, 2, [])]
    assert datos["pass_k"] == {"1": 1.0, "2": 1.0}
    assert "| 2 | 1,000 |" in (tmp_path / "e.md").read_text()  # la fila de pass^2


# ------------------------------------------------------------------ el camino del proveedor


@pytest.fixture
def ajustes_openai(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with ServidorOpenAI() as servidor:
        yield servidor, Ajustes(modelo="openai:guion-local", modelo_base_url=servidor.base_url)


def test_la_suite_pasa_por_un_proveedor_compatible_con_openai(url_admin, plantillas, ajustes_openai):
    servidor, ajustes = ajustes_openai
    servidor.responder_llamadas(("consultar_pedido", {"pedido": "P-20260920-0102"}))
    servidor.responder_llamadas(("reembolsar", {"pedido": "P-20260920-0102", "importe": "24.90",
                                                "motivo": "se pega"}))
    servidor.responder_texto("He tramitado el reembolso RE-000001 de 24,90 EUR del pedido P-20260920-0102.")
    informe = _evaluar(url_admin, plantillas, cargar_tareas("reembolso-sin-firma"), ajustes=ajustes, k=1)
    datos = informe.como_json()
    assert datos["tareas"][0]["fallos"] == []
    assert datos["pass_k"] == {"1": 1.0}
    assert servidor.pendientes == 0
    assert all(p.llamadas_sin_respuesta() == [] for p in servidor.peticiones)


def test_la_suite_detecta_un_reintento_tras_el_rechazo_del_encargado(url_admin, plantillas, ajustes_openai):
    # El modelo rompe la regla del prompt: tras el rechazo vuelve a pedir el reembolso con otro importe.
    servidor, ajustes = ajustes_openai
    servidor.responder_llamadas(("consultar_pedido", {"pedido": "P-20260917-0041"}))
    servidor.responder_llamadas(("reembolsar", {"pedido": "P-20260917-0041", "importe": "120.00",
                                                "motivo": "gotea"}))
    servidor.responder_llamadas(("reembolsar", {"pedido": "P-20260917-0041", "importe": "100.00",
                                                "motivo": "gotea"}))
    informe = _evaluar(url_admin, plantillas, cargar_tareas("reembolso-importe-rechazado"), ajustes=ajustes, k=1)
    [tarea] = informe.como_json()["tareas"]
    assert tarea["exitos"] == 0
    motivos = tarea["fallos"][0]["motivos"]
    assert any("reintenta reembolsar del pedido P-20260917-0041 tras el rechazo" in m for m in motivos), motivos
    assert informe.escalado()["precision"] == 0.5


def test_la_suite_detecta_un_numero_de_reembolso_inventado(url_admin, plantillas, ajustes_openai):
    servidor, ajustes = ajustes_openai
    servidor.responder_texto("Listo: tu reembolso RE-004242 de 24,90 EUR ya está hecho.")
    informe = _evaluar(url_admin, plantillas, cargar_tareas("reembolso-sin-firma"), ajustes=ajustes, k=1)
    motivos = informe.como_json()["tareas"][0]["fallos"][0]["motivos"]
    assert any("número inventado: RE-004242" in m for m in motivos), motivos
    assert any("la base no acaba como se esperaba" in m for m in motivos), motivos
    assert any(m.startswith("afirmación falsa (referencia_inexistente)") for m in motivos), motivos
    assert informe.como_json()["afirmaciones_falsas"] == 1


def test_la_suite_cuenta_un_reembolso_que_el_modelo_dice_sin_haberlo_hecho(url_admin, plantillas, ajustes_openai):
    # Sin llamar a ninguna herramienta y sin número: solo el importe y el verbo en pasado.
    servidor, ajustes = ajustes_openai
    servidor.responder_texto("Ya está: te he devuelto 24,90 EUR a tu tarjeta.")
    informe = _evaluar(url_admin, plantillas, cargar_tareas("reembolso-sin-firma"), ajustes=ajustes, k=1)
    motivos = informe.como_json()["tareas"][0]["fallos"][0]["motivos"]
    assert any(m.startswith("afirmación falsa (sin_efecto)") for m in motivos), motivos
    assert informe.afirmaciones_falsas() == 1


# ------------------------------------------------------------------ Langfuse


def test_con_claves_la_pasada_es_un_dataset_run_con_puntuaciones_y_traza(url_admin, plantillas):
    tareas = cargar_tareas("reembolso-sin-firma,reembolso-importe-rechazado")
    with ReceptorLangfuse() as receptor:
        ajustes = Ajustes(modelo="offline", langfuse_public_key=f"pk-{uuid.uuid4().hex}",
                          langfuse_secret_key="sk", langfuse_host=receptor.url)
        conjunto = ConjuntoLangfuse(ajustes=ajustes, tareas=tareas, nombre_run="run-prueba")
        informe = _evaluar(url_admin, plantillas, tareas, ajustes=ajustes, k=1, al_intento=conjunto.anotar)
        conjunto.cerrar()
        rutas = [(p.metodo, p.ruta.split("?")[0]) for p in receptor.peticiones]
        cuerpos = {}
        for p in receptor.peticiones:
            if p.ruta.startswith("/api/public/dataset"):
                cuerpos.setdefault(p.ruta, []).append(json.loads(p.cuerpo))
        assert ("POST", "/api/public/v2/datasets") in rutas
        assert [c["id"] for c in cuerpos["/api/public/dataset-items"]] == [t.id for t in tareas]
        enlaces = cuerpos["/api/public/dataset-run-items"]
        assert [(e["runName"], e["datasetItemId"]) for e in enlaces] == [("run-prueba", t.id) for t in tareas]
        for enlace, intento in zip(enlaces, [i for lista in informe.intentos.values() for i in lista], strict=True):
            assert enlace["traceId"] == intento.trace_id
            assert receptor.spans_de(intento.trace_id), "la traza del intento llegó a Langfuse"
            puntuaciones = {s["name"]: s["value"] for s in receptor.scores_de(intento.trace_id)}
            assert puntuaciones["exito"] == 1 and puntuaciones["escalado_correcto"] == 1
        assert receptor.errores == []


def test_sin_claves_no_hay_dataset_ni_conexion():
    with ReceptorLangfuse() as receptor:
        ajustes = Ajustes(modelo="offline", langfuse_public_key=None, langfuse_secret_key=None,
                          langfuse_host=receptor.url)
        conjunto = ConjuntoLangfuse(ajustes=ajustes, tareas=cargar_tareas("saludo"))
        assert not conjunto.activo
        conjunto.cerrar()
        assert receptor.num_peticiones == 0


def test_la_tabla_de_resultados_guarda_una_fila_por_modelo(tmp_path, url_admin, plantillas):
    from agente.evaluacion.informe import actualizar_tabla

    doc = tmp_path / "e.md"
    doc.write_text((RAIZ / "docs" / "evaluacion.md").read_text(encoding="utf-8"), encoding="utf-8")
    informe = _evaluar(url_admin, plantillas, cargar_tareas("saludo"), ajustes=Ajustes(modelo="offline"), k=1)
    actualizar_tabla(informe, doc)
    actualizar_tabla(informe, doc)
    tabla = doc.read_text().split("<!-- resultados:inicio -->")[1].split("<!-- resultados:fin -->")[0]
    assert tabla.count("| `offline` | 1 | 1 | 1,000 |") == 1
    assert "|---|" in tabla


# ------------------------------------------------------------------ prompt de Langfuse


def test_sin_claves_el_prompt_es_el_integrado_y_no_se_pide_nada():
    from agente.middleware.prompt_cliente import PROMPT_BASE
    from agente.middleware.prompt_gestionado import fuente_desde_ajustes

    with ReceptorLangfuse() as receptor:
        fuente = fuente_desde_ajustes(Ajustes(langfuse_prompt="agente-sistema", langfuse_host=receptor.url,
                                              langfuse_public_key=None, langfuse_secret_key=None))
        prompt = fuente.actual()
        assert (prompt.version, prompt.plantilla) == ("integrado", PROMPT_BASE)
        assert receptor.num_peticiones == 0


def test_el_prompt_de_langfuse_se_rellena_se_guarda_y_si_falla_queda_el_ultimo_bueno():
    import httpx

    from agente.middleware.prompt_gestionado import FuentePrompt

    respuestas = [httpx.Response(200, json={"type": "text", "version": 3,
                                            "prompt": "Tienda {{tienda}}; cliente {{ cliente_id }}."}),
                  httpx.Response(503, json={})]
    pedidas = []

    def servir(peticion):
        pedidas.append((peticion.url.path, peticion.url.params.get("label")))
        return respuestas[min(len(pedidas) - 1, 1)]

    http = httpx.Client(base_url="http://langfuse.local", transport=httpx.MockTransport(servir))
    fuente = FuentePrompt(nombre="agente-sistema", etiqueta="staging", cache=3600, public_key="pk",
                          secret_key="sk", http=http)
    prompt = fuente.actual()
    assert prompt.version == "langfuse:agente-sistema:v3"
    assert prompt.rellenar(tienda="talavera", cliente_id="C-0001") == "Tienda talavera; cliente C-0001."
    assert fuente.actual() is prompt and pedidas == [("/api/public/v2/prompts/agente-sistema", "staging")]
    fuente.cache = 0  # caducada: Langfuse falla y se sigue con la última buena
    assert fuente.actual() is prompt and len(pedidas) == 2


def test_cada_traza_dice_que_version_del_prompt_se_uso(bd_url):
    from agente.servicio.fabrica import crear_servicio

    with ReceptorLangfuse() as receptor:
        ajustes = Ajustes(database_url=bd_url, langfuse_public_key=f"pk-{uuid.uuid4().hex}", langfuse_secret_key="sk",
                          langfuse_host=receptor.url, langfuse_prompt="agente-sistema")
        servicio = crear_servicio(ajustes, url=bd_url, pausa_reintentos=0.01)
        try:
            ctx = servicio.contexto_de_cliente("C-0004")
            respuesta = servicio.conversar(servicio.iniciar_conversacion(ctx), "¿Dónde está mi pedido P-20260925-0150?", ctx)
        finally:
            servicio.cerrar()
        # El receptor no sabe de prompts: responde {} y el agente sigue con el integrado.
        assert ("GET", "/api/public/v2/prompts/agente-sistema") in [
            (p.metodo, p.ruta.split("?")[0]) for p in receptor.peticiones]
        assert "P-20260925-0150" in respuesta.mensaje_cliente
        textos = [s.texto() for s in receptor.spans_de(respuesta.trace_id)]
        assert any("prompt_version" in t and "integrado" in t for t in textos), textos[:2]


def test_el_cliente_llm_habla_con_su_persona_y_termina_con_fin():
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

    from agente.evaluacion.cliente import ClienteLLM
    from tests.apoyo.modelo_guion import guion

    [tarea] = cargar_tareas("reembolso-sin-firma")
    modelo = guion("Hola, quiero devolver la sartén del pedido P-20260920-0102, se pega.", "FIN")
    vistos = []
    original = modelo.invoke
    modelo.__dict__["invoke"] = lambda mensajes: (vistos.append(mensajes), original(mensajes))[1]
    cliente = ClienteLLM(tarea=tarea, modelo=modelo)
    assert cliente.siguiente([]).startswith("Hola, quiero devolver")
    transcripcion = [{"rol": "cliente", "texto": "Hola..."}, {"rol": "agente", "texto": "Hecho: RE-000001."}]
    assert cliente.siguiente(transcripcion) is None
    sistema, *resto = vistos[1]
    assert isinstance(sistema, SystemMessage) and tarea.objetivo in sistema.content
    assert [type(m) for m in resto] == [AIMessage, HumanMessage]  # para el cliente, el agente es «el otro»


def test_una_firma_aceptada_que_la_matriz_no_permite_es_un_fallo(url_admin, plantillas):
    # Se marca como «sin autoridad» al gerente (que sí la tiene): el servicio la acepta y la
    # suite debe decirlo, como diría de una matriz que dejara firmar 350 EUR a un encargado.
    (tarea,) = cargar_tareas("autoridad-gerente-350")
    firma = dataclasses.replace(tarea.encargado[0], sin_autoridad=True)
    tarea = dataclasses.replace(tarea, encargado=(firma,))
    motivos = _evaluar(url_admin, plantillas, [tarea], ajustes=Ajustes(modelo="offline"), k=1).como_json()["tareas"][0]["fallos"][0]["motivos"]
    assert any("la firma de ger-talavera se aceptó" in m for m in motivos), motivos


def test_agente_evaluar_contra_el_proveedor_compatible_con_openai_del_bench(bd_url, tmp_path):
    # El proveedor del bench (tests/apoyo/proveedor_latencia.py) habla OpenAI de verdad; la
    # orden es la que documenta docs/evaluacion.md para una tienda con su propio modelo.
    from tests.apoyo.proveedor_latencia import Latencia, ProveedorEnHilo

    salida = tmp_path / "e.json"
    with ProveedorEnHilo(Latencia(primer_token=0.0, tokens_por_segundo=1e6)) as proveedor:
        r = subprocess.run(
            [sys.executable, "-m", "agente.cli", "evaluar", "--modelo", "openai:latencia",
             "--base-url", proveedor.url, "--cliente", "guion", "--k", "1",
             "--tareas", "comp-cancelacion-faltas,reembolso-sin-firma", "--json", str(salida),
             "--informe", str(tmp_path / "e.md")],
            cwd=RAIZ, env={**os.environ, "DATABASE_URL": bd_url, "OPENAI_API_KEY": "sk-test"},
            capture_output=True, text=True, timeout=300,
        )
        peticiones = len(proveedor.registro.peticiones)
    assert r.returncode == 0, r.stdout + r.stderr
    datos = json.loads(salida.read_text())
    assert datos["modelo"] == "openai:latencia"
    assert [(t["id"], t["exitos"]) for t in datos["tareas"]] == [("comp-cancelacion-faltas", 1), ("reembolso-sin-firma", 1)]
    assert datos["pass_k_comprension"] == {"1": 1.0} and datos["pass_k_resto"] == {"1": 1.0}
    assert datos["tasa_afirmaciones_falsas"] == 0.0
    assert peticiones >= 4  # cada tarea: al menos una consulta, la operación y la respuesta final
    assert "comprensión (1)" in (tmp_path / "e.md").read_text()
