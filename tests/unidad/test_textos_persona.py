"""El barrido de los textos que lee una persona: cada mensaje al cliente y cada etiqueta del
personal que el producto sabe escribir, con datos de ejemplo, pasa las reglas de
``tests/apoyo/reglas_texto.py`` (sin claves internas, SKUs, enums, negativos, máscaras,
tercera persona para el cliente; con punto final, plural que toca y en español).

Se recorre lo que el producto declara, no una lista a mano: cada operación de
``OPERACIONES`` (su texto de espera, su tarjeta, su historial), cada función pública de los
módulos de redacción del modelo offline (los ejemplos se eligen por el nombre del
parámetro: una función nueva con un parámetro sin ejemplo hace fallar la prueba), cada
mensaje de error de las herramientas que acaba en el chat (leído del código), cada valor de
la política y los errores de uso de la CLI. ``test_el_barrido_ve_un_texto_plantado`` fija que
el barrido puede fallar.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from collections.abc import Iterator
from decimal import Decimal

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from agente.modelo_offline.resultados import Llamada, Resultado
from nucleo.operaciones import OPERACIONES
from operaciones import carpetas
from tests.apoyo.reglas_texto import CLIENTE, PERSONAL, defectos, negativa_sin_salida
from tests.apoyo.rutas import RAIZ

PEDIDO = "P-20260917-0041"
NOMBRE = "Cafetera de goteo Aroma 10 tazas"
LINEAS = [{"linea": 1, "sku": "CAF-001", "nombre": NOMBRE, "unidades": 1, "importe": "120.00"},
          {"linea": 2, "sku": "MEN-001", "nombre": "Sartén antiadherente 24 cm", "unidades": 2,
           "importe": "49.80"}]
ALTERNATIVAS = [{"sku": "CAF-002", "nombre": "Cafetera italiana Moka 6 tazas", "pvp": "29.90",
                 "diferencia": "-90.10"},
                {"sku": "CAF-004", "nombre": "Cafetera superautomática Barista", "pvp": "249.00",
                 "diferencia": "129.00"}]
ESTADOS = ("pendiente", "enviado", "entregado", "cancelado")


def _liquidaciones() -> Iterator[dict]:
    yield {"tipo": "ninguna"}
    yield {"tipo": "renunciada"}
    for tipo, numero in (("reembolso", "RE-000002"), ("cobro", "CO-000001")):
        yield {"tipo": tipo, "numero": numero, "importe": "90.10", "estado": "completado"}
        yield {"tipo": tipo, "numero": numero, "importe": "90.10", "estado": "pendiente"}
    yield {"tipo": "cobro", "numero": "CO-000001", "importe": "90.10", "estado": "pendiente",
           "enlace_pago": "https://pagos.example/c/1"}


def _datos_ok() -> Iterator[dict]:
    """El JSON de cada operación ejecutada (todas las claves de número a la vez)."""
    base = {"pedido": PEDIDO, "importe": "120.00", "reembolso": "RE-000001", "sustitucion": "SU-000001",
            "cancelacion": "CA-000001", "reenvio": "RV-000001", "vale": "VA-000001",
            "cambio_direccion": "CD-000001", "numero": "CD-000001", "codigo": "VALE-ABCD",
            "nombre_nuevo": "Cafetera italiana Moka 6 tazas", "sku_nuevo": "CAF-002",
            "importe_devuelto": "120.00", "caduca": "2026-12-31", "producto": NOMBRE,
            "direccion_nueva": "Calle Mayor 1, 28013 Madrid (Madrid)", "unidades": 1, "tienda": "Madrid",
            "articulo_anterior": "Camisa Oxford blanca, talla M", "articulo_nuevo": "Camisa Oxford blanca, talla L"}
    # Y el número de cada operación declarada, venga de donde venga (una carpeta nueva incluida).
    base |= {op.offline.clave_numero: f"{op.libro.prefijo}-000001" for op in OPERACIONES
             if op.offline.clave_numero not in base}
    for diferencia, liquidacion in zip(("-90.10", "-90.10", "0", "0", "129.00", "129.00", "129.00", "129.00"),
                                       _liquidaciones(), strict=False):
        yield {**base, "diferencia": diferencia, "liquidacion": liquidacion}
    yield {**base, "repetido": True}


def _llamadas() -> Iterator[Llamada]:
    args = {"pedido": PEDIDO, "importe": "120.00"}
    yield Llamada(nombre="x", args=args, id="1")
    yield Llamada(nombre="x", args=args, id="1",
                  resultado=Resultado(tipo="rechazo", texto="", motivo_rechazo="fuera de plazo"))
    yield Llamada(nombre="x", args=args, id="1", resultado=Resultado(tipo="error", texto="la pasarela no responde"))
    for datos in _datos_ok():
        yield Llamada(nombre="x", args=args, id="1", resultado=Resultado(tipo="ok", texto="{}", datos=datos))
        yield Llamada(nombre="x", args=args, id="1",
                      resultado=Resultado(tipo="ok", texto="{}", datos=datos, editado=True))


def _resultados() -> Iterator[Resultado]:
    yield Resultado(tipo="pendiente")
    yield Resultado(tipo="rechazo", texto="", motivo_rechazo="fuera de plazo")
    yield Resultado(tipo="error", texto="pedido no encontrado")
    yield Resultado(tipo="ok", texto="Se puede devolver en 30 días.")


def _pedidos_con_reembolsos() -> Iterator[dict]:
    """El pedido con lo que dice de su dinero: sin reembolsos, en firma, pendiente y emitido."""
    for en_firma, reembolsos in ((False, []), (True, []), (False, [{"numero": "RE-000001", "importe": "24.90",
                                  "estado": "pendiente", "fecha": "2026-09-21", "emitido_en": None}]),
                                 (False, [{"numero": "RE-000001", "importe": "24.90", "estado": "emitido",
                                           "fecha": "2026-09-21", "emitido_en": "2026-09-21"}])):
        for dias in (1, 10):
            yield {"pedido": PEDIDO, "estado": "entregado", "fecha": "2026-09-17", "importe": "169.80",
                   "entregado_en": "2026-09-20", "dias_desde_entrega": 1, "lineas": LINEAS, "reembolsado": "24.90",
                   "metodo_pago": "tarjeta", "reembolsos": reembolsos,
                   "abono": {"medio": "la tarjeta con la que pagaste", "plazo_dias_habiles": dias,
                             "plazo": "1 día hábil" if dias == 1 else f"hasta {dias} días hábiles",
                             "reembolso_en_firma": en_firma}}


# Ejemplos por nombre de parámetro: cada valor de la lista es un caso.
EJEMPLOS = {
    "pedido": [PEDIDO],
    "estado": list(ESTADOS),
    "lineas_pedido": [LINEAS],
    "lineas": [LINEAS],
    "palabra": ["tostadora"],
    "llamada": list(_llamadas()),
    "resultado": list(_resultados()),
    "nombre": [NOMBRE],
    "sku": ["CAF-001"],
    "datos": [{"pedido": PEDIDO, "estado": e, "fecha": "2026-09-17", "importe": "169.80",
               "entregado_en": "2026-09-20" if e == "entregado" else None, "dias_desde_entrega": 1,
               "lineas": LINEAS, "reembolsado": "49.80"} for e in ESTADOS] + list(_pedidos_con_reembolsos()),
    "alternativas": [ALTERNATIVAS],
    "elegida": [ALTERNATIVAS[0], ALTERNATIVAS[1]],
    "deseo": ["que sea más barata"],
    "accion": ["tramitar el reembolso"],
    "codigo_postal": ["2801"],
    "desenlace": ["He tramitado el reembolso RE-000001 de 120,00 EUR del pedido P-20260917-0041."],
}
# Lo que no redacta para el cliente (lee o decide) o no tiene frase propia.
NO_REDACTAN = {"eur", "fecha", "lineas", "ejecutada", "sin_opciones", "motivo_del_texto", "limpiar_cola",
               "normalizar", "texto_de", "articulo_nombrado"}
# Los del modelo offline y las frases de cada carpeta de ``operaciones/``.
MODULOS_OFFLINE = (*(f"agente.modelo_offline.{m}" for m in ("redaccion", "seguimiento", "abono",
                                                            "matices")),
                   *(f"operaciones.{nombre}.frases" for nombre in carpetas.nombres()))


def _combinaciones(funcion) -> Iterator[dict]:
    parametros = [p for p in inspect.signature(funcion).parameters.values() if p.default is inspect.Parameter.empty
                  and p.kind is not inspect.Parameter.KEYWORD_ONLY]
    faltan = [p.name for p in parametros if p.name not in EJEMPLOS]
    assert not faltan, f"{funcion.__module__}.{funcion.__name__}: sin ejemplo para {faltan} (añádelo a EJEMPLOS)"
    casos: list[dict] = [{}]
    for p in parametros:
        casos = [{**c, p.name: v} for c in casos for v in EJEMPLOS[p.name]]
    yield from casos


def textos_offline() -> Iterator[tuple[str, str]]:
    for nombre_modulo in MODULOS_OFFLINE:
        modulo = importlib.import_module(nombre_modulo)
        for nombre in modulo.__all__:
            objeto = getattr(modulo, nombre)
            if isinstance(objeto, str) and nombre.isupper() and " " in objeto:
                yield f"{nombre_modulo}.{nombre}", objeto
            if not inspect.isfunction(objeto) or nombre in NO_REDACTAN:
                continue
            if inspect.signature(objeto).return_annotation not in ("str", str):
                continue
            for args in _combinaciones(objeto):
                yield f"{nombre_modulo}.{nombre}{tuple(args)}", objeto(**args)


def textos_cliente() -> Iterator[tuple[str, str]]:
    from agente.servicio import textos
    from herramientas.registro import REGISTRO as registro
    from politicas.defectos import DEFECTOS
    from politicas.texto_cliente import texto_politica

    productos = {"CAF-001": NOMBRE, "CAF-002": "Cafetera italiana Moka 6 tazas"}
    args = {"pedido": PEDIDO, "importe": "120.00", "sku_original": "CAF-001", "sku_nuevo": "CAF-002",
            "linea": 1, "lineas": [1], "motivo": "no_llego", "porcentaje": 10, "calle": "Calle Mayor 1",
            "codigo_postal": "28013", "localidad": "Madrid"}
    acciones = [{"name": op.herramienta, "args": args} for op in OPERACIONES]
    for accion in acciones:
        yield f"espera {accion['name']}", textos.mensaje_espera({"action_requests": [accion]}, registro, productos)
    yield "espera de varias", textos.mensaje_espera({"action_requests": acciones[:2]}, registro, productos)
    yield "disculpa", textos.DISCULPA
    yield "caducidad", textos.RESPUESTA_CADUCIDAD
    yield "retenido", textos.mensaje_retenido()
    for tipo in ("reembolso", "cobro"):
        yield f"marcado {tipo}", textos.movimiento_marcado(tipo, "90,10 EUR", PEDIDO)
    yield "política", texto_politica("Tienda Centro", DEFECTOS)
    yield from textos_offline()


# Las clases de error cuyo mensaje acaba en el chat (la herramienta falla y el cliente lee por qué).
ERRORES_AL_CHAT = {"ErrorDominio", "ImporteNoValido", "DireccionNoValida"}
_INSTRUCCION_MODELO = re.compile(r"\bDile al cliente\b.*$", re.DOTALL | re.IGNORECASE)


def _literal(nodo: ast.AST, asignaciones: dict[str, list[ast.AST]]) -> list[str]:
    """El texto fijo de un argumento (las partes variables como «X»)."""
    if isinstance(nodo, ast.Constant) and isinstance(nodo.value, str):
        return [nodo.value]
    if isinstance(nodo, ast.JoinedStr):
        return ["".join(v.value if isinstance(v, ast.Constant) else "X" for v in nodo.values)]
    if isinstance(nodo, ast.BinOp):
        return [a + b for a in _literal(nodo.left, asignaciones) for b in _literal(nodo.right, asignaciones)] or []
    if isinstance(nodo, ast.IfExp):
        return _literal(nodo.body, asignaciones) + _literal(nodo.orelse, asignaciones)
    if isinstance(nodo, ast.Name):
        return [t for valor in asignaciones.get(nodo.id, []) for t in _literal(valor, asignaciones)]
    return []


def textos_de_errores_al_chat() -> Iterator[tuple[str, str]]:
    """Cada mensaje de error que una herramienta devuelve al chat, leído del código."""
    for ruta in sorted([*(RAIZ / "herramientas").glob("*.py"), *(RAIZ / "caja").glob("*.py"), *(RAIZ / "operaciones").glob("*/herramienta.py")]):
        arbol = ast.parse(ruta.read_text(encoding="utf-8"))
        for funcion in [n for n in ast.walk(arbol) if isinstance(n, ast.FunctionDef)]:
            asignaciones: dict[str, list[ast.AST]] = {}
            for nodo in ast.walk(funcion):
                if isinstance(nodo, ast.Assign) and len(nodo.targets) == 1 and isinstance(nodo.targets[0], ast.Name):
                    asignaciones.setdefault(nodo.targets[0].id, []).append(nodo.value)
            for nodo in ast.walk(funcion):
                if (isinstance(nodo, ast.Call) and isinstance(nodo.func, ast.Name)
                        and nodo.func.id in ERRORES_AL_CHAT and nodo.args):
                    for texto in _literal(nodo.args[0], asignaciones):
                        texto = _INSTRUCCION_MODELO.sub("", texto).strip()
                        if texto:
                            yield f"{ruta.name}:{nodo.lineno}", texto


def textos_personal() -> Iterator[tuple[str, str, bool]]:
    """(dónde, texto, es_frase) de lo que lee el personal."""
    from politicas.reglas import base
    from politicas.valores import VALORES, texto_valor

    for op in OPERACIONES:
        yield f"{op.nombre}.titulo", op.titulo, False
        yield f"{op.nombre}.matriz", f"Límite de gerente en {op.matriz.plural}", False
        yield f"{op.nombre}.matriz", f"La firma no vale para {op.matriz.singular}.", True
        for campo in op.campos:
            yield f"{op.nombre}.campo {campo.nombre}", campo.etiqueta, False
        yield f"{op.nombre}.historial", f"{op.historial.etiqueta} {op.libro.prefijo}-000001", False
        for n in (1, 3):
            yield f"{op.nombre}.historial", f"{n} {op.historial.plural if n > 1 else op.historial.etiqueta.lower()}", False
        if op.tarjeta is not None:
            for etiqueta in re.findall(r'AS "([^"]+)"', op.tarjeta.sql):
                yield f"{op.nombre}.tarjeta", etiqueta, False
            for valor in re.findall(r"THEN '([^']+)'|ELSE '([^']+)'", op.tarjeta.sql):
                yield f"{op.nombre}.tarjeta", "".join(valor), False
    for valor in VALORES.values():
        yield f"valor {valor.nombre}", valor.descripcion, True
        yield f"valor {valor.nombre}", f"entre {texto_valor(valor, valor.minimo)} y {texto_valor(valor, valor.maximo)}", False
        yield f"valor {valor.nombre} (1)", texto_valor(valor, 1 if valor.tipo == "entero" else Decimal("1.00")), False
    for n in (1, 2):
        yield "motivo compensaciones", base.motivo_compensaciones(n, n), False
        yield "motivo vales", base.motivo_vales(n), False
        yield "motivo plazo", base.motivos_de_elegibilidad(
            {"dentro_de_ventana": False, "dias_desde_entrega": n, "ventana_dias": 30, "reembolsos": 0,
             "sustituciones": 0})[0], False
        yield "motivo rechazadas", base.motivo_rechazadas({"rechazadas_pedido": n, "ventana_devoluciones_dias": 30}), False


def textos_reglas() -> Iterator[tuple[str, str, bool]]:
    """Cada motivo (y razón de «imposible») de cada regla de la política con hechos generados."""
    from tests.apoyo.hechos_ejemplo import casos_de_reglas

    for regla, texto in casos_de_reglas():
        yield f"regla {regla}", texto, False


def textos_correos_cliente() -> Iterator[tuple[str, str, bool]]:
    """(dónde, línea, es_frase) de cada correo al cliente (``agente/notificaciones/plantillas_cliente.py``):
    el asunto y lo que presenta un enlace («...: https://...») no llevan punto final."""
    from agente.notificaciones.plantillas_cliente import pintar_cliente

    operacion = {"titulo": "Reembolso", "pedido": PEDIDO, "importe": "120.00"}
    sucesos = [{"suceso": "decision", "operaciones": [{**operacion, "resultado": r, "importe_final": "90.00",
                                                         "motivo": "fuera de plazo"}]}
               for r in ("approve", "edit", "reject", "respond")]
    sucesos += [{"suceso": "decision", "por_sistema": True, "operaciones": [operacion]},
                {"suceso": "decision", "fallo": True, "nota": "Lo revisamos mañana.", "operaciones": []}]
    for suceso in ("pago", "marcado", "fallo_tardio", "caducado", "respuesta"):
        for tipo, concepto, rechazado in (("reembolso", "devolucion", False), ("reembolso", "diferencia", True),
                                          ("reembolso", "anulacion", False), ("cobro", None, False)):
            sucesos.append({"suceso": suceso, "tipo": tipo, "concepto": concepto, "rechazado": rechazado,
                            "importe": "24.90", "pedido": PEDIDO})
    for datos in sucesos:
        mensaje = pintar_cliente({"tienda_nombre": "Talavera de la Reina", "cliente_nombre": "Ana García",
                                  **datos}, enlace="https://t.example/#token=abc",
                                 enlace_baja="https://t.example/avisos#baja=xyz", horas_enlace=24)
        yield f"correo {datos['suceso']} (asunto)", mensaje.asunto, False
        for linea in mensaje.texto.splitlines():
            if linea.strip() and linea != "--" and not linea.startswith(("Hola", "https://")):
                presenta_enlace = linea.endswith(":") or bool(re.search(r":\s*https?://\S+$", linea))
                yield f"correo {datos['suceso']}", linea, not presenta_enlace


# Lo que pintan los JS de la web para el personal: literales con espacio que empiezan en
# mayúscula (frases y etiquetas); un texto con «${...}» se lee con la parte variable como «X».
_LITERAL_JS = re.compile(r'"((?:[^"\\\n]|\\.)*)"|`((?:[^`\\]|\\.)*)`')


def textos_js() -> Iterator[tuple[str, str]]:
    for ruta in sorted((RAIZ / "agente/web/estaticos").glob("encargado*.js")):
        codigo = re.sub(r"^\s*//.*$", "", ruta.read_text(encoding="utf-8"), flags=re.M)
        for doble, plantilla in _LITERAL_JS.findall(codigo):
            texto = re.sub(r"\$\{[^}]*\}", "X", doble or plantilla)
            if " " in texto and texto[:1].isupper() and "<" not in texto and "=" not in texto:
                yield ruta.name, texto


def _ids(casos):
    return [c[0][:90] for c in casos]


CLIENTE_CASOS = list(textos_cliente())
CORREOS_CASOS = list(textos_correos_cliente())
ERRORES_CASOS = list(textos_de_errores_al_chat())
PERSONAL_CASOS = list(textos_personal()) + list(textos_reglas())
JS_CASOS = list(textos_js())


def test_el_barrido_recorre_todas_las_operaciones_y_la_redaccion_offline():
    vistos = " ".join(d for d, _ in CLIENTE_CASOS)
    for op in OPERACIONES:
        assert f"espera {op.herramienta}" in vistos
    assert len(CLIENTE_CASOS) > 150 and len(ERRORES_CASOS) > 20 and len(PERSONAL_CASOS) > 50
    # Cada regla de la política da motivos al barrido, y hay correos y textos de la web.
    from politicas import REGLAS

    assert {d.removeprefix("regla ") for d, _, _ in PERSONAL_CASOS if d.startswith("regla ")} == set(REGLAS)
    assert len(CORREOS_CASOS) > 50 and len(JS_CASOS) > 50


@pytest.mark.parametrize(("donde", "texto"), CLIENTE_CASOS, ids=_ids(CLIENTE_CASOS))
def test_cada_texto_al_cliente_se_lee_bien(donde, texto):
    assert not defectos(texto, para=CLIENTE), (donde, texto)


@pytest.mark.parametrize(("donde", "texto"), CLIENTE_CASOS, ids=_ids(CLIENTE_CASOS))
def test_cada_negativa_al_cliente_ofrece_un_siguiente_paso(donde, texto):
    # «No se puede», «no he encontrado», «no ha aprobado»...: y después, qué puede hacer.
    assert not negativa_sin_salida(texto), (donde, texto)


@pytest.mark.parametrize(("donde", "texto"), ERRORES_CASOS, ids=_ids(ERRORES_CASOS))
def test_cada_error_de_una_herramienta_que_lee_el_cliente_se_lee_bien(donde, texto):
    from agente.modelo_offline.redaccion import error

    # Lo que lee el cliente: la redacción del error (sin lo que es solo para el modelo).
    leido = error("tramitar tu solicitud", Resultado(tipo="error", texto=texto))
    assert not defectos(leido, para=CLIENTE), (donde, leido)


@pytest.mark.parametrize(("donde", "texto", "frase"), PERSONAL_CASOS, ids=_ids(PERSONAL_CASOS))
def test_cada_etiqueta_del_personal_se_lee_bien(donde, texto, frase):
    assert not defectos(texto, para=PERSONAL, frase=frase), (donde, texto)


@pytest.mark.parametrize(("donde", "texto", "frase"), CORREOS_CASOS, ids=_ids(CORREOS_CASOS))
def test_cada_linea_de_los_correos_al_cliente_se_lee_bien(donde, texto, frase):
    assert not defectos(texto, para=CLIENTE, frase=frase), (donde, texto)
    assert not (frase and negativa_sin_salida(texto)), (donde, texto)  # el asunto no da para más


@pytest.mark.parametrize(("donde", "texto"), JS_CASOS, ids=_ids(JS_CASOS))
def test_cada_texto_de_la_web_del_personal_se_lee_bien(donde, texto):
    # Sin claves internas, SKUs, enums ni inglés; el punto final no se mira (etiquetas y trozos).
    assert not defectos(texto, para=PERSONAL, frase=False), (donde, texto)


def _hojas(comando, ruta=()):
    subordenes = getattr(comando, "commands", None)
    if subordenes:
        for nombre, sub in subordenes.items():
            yield from _hojas(sub, (*ruta, nombre))
    else:
        yield ruta


@pytest.mark.parametrize("ruta", list(_hojas(get_command(importlib.import_module("agente.cli").app))),
                         ids=" ".join)
def test_los_errores_de_uso_de_la_cli_se_leen_bien(ruta):
    from agente.cli import app

    resultado = CliRunner().invoke(app, [*ruta, "--no-existe"], env={"COLUMNS": "200"}, prog_name="agente")
    assert resultado.exit_code == 2
    errores = [linea.strip(" │╭╮╰╯─") for linea in resultado.output.splitlines() if "Error" in linea or "opción" in linea]
    errores = [e for e in errores if e and not set(e) <= set("─ ")]
    assert errores, resultado.output
    for error in errores:
        assert not defectos(error, para=PERSONAL, frase=False), (ruta, error)


def test_las_paginas_de_entrada_no_piden_pegar_un_token_fuera_de_la_demo():
    for pagina in (RAIZ / "agente/web/estaticos").glob("*.html"):
        if pagina.name == "docs.html":  # la referencia de la API: el token es su parámetro
            continue
        html = pagina.read_text(encoding="utf-8")
        # Lo que habla de tokens va dentro de un bloque que solo enseña la demo.
        for bloque in re.findall(r'<div id="entrada-token" hidden>.*?</div>|<[^>]*>[^<]*\btoken\b[^<]*', html, re.S):
            assert bloque.startswith('<div id="entrada-token" hidden>'), (pagina.name, bloque)


def test_el_barrido_ve_un_texto_plantado(monkeypatch):
    from agente.servicio import textos

    assert not defectos(textos.DISCULPA, para=CLIENTE)
    monkeypatch.setattr(textos, "DISCULPA", "Lo sentimos; la tienda pide disculpas al cliente.")
    fallos = [(d, defectos(t, para=CLIENTE)) for d, t in textos_cliente() if defectos(t, para=CLIENTE)]
    assert [d for d, _ in fallos] == ["disculpa"]
    assert "tercera persona para el cliente «al cliente»" in fallos[0][1]
