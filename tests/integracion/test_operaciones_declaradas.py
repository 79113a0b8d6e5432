"""Cada operación con efecto declarada está completa, y la comprobación nombra lo que falte.

``faltas(op, conexion)`` recorre lo que el producto lee de una declaración
(``nucleo.operaciones``) y devuelve, en español, cada parte que falta: la regla y
sus hechos, las herramientas del registro, las filas de la matriz por defecto y de cada
matriz guardada, la vista ``efectos``, los campos de la tarjeta, el texto para el cliente,
la intención del modelo offline, la instantánea, el historial y al menos una tarea de
evaluación, los valores de la política (con su defecto) y su frase para el cliente, el
prompt del modelo y, si la operación tiene carpeta (``operaciones/<operacion>/``), cada
pieza de la carpeta y su documento. Las pruebas de abajo quitan una parte a una copia (``dataclasses.replace``) y
comprueban que la falta se nombra; lo que la declaración misma no admite (un título
vacío, ningún campo) ya lo rechaza su constructor.
"""

from __future__ import annotations

import dataclasses
import re
import shutil
from decimal import Decimal
from pathlib import Path

import pytest

from agente.evaluacion.instantanea import tablas as tablas_instantanea
from agente.evaluacion.tareas import TABLAS, cargar_tareas
from agente.middleware.prompt_cliente import PROMPT_BASE
from agente.modelo_offline.lectura import INTENCIONES, tareas
from agente.modelo_offline.plan import PASOS
from agente.servicio.politica.comprobar_operaciones import (
    completar_matrices,
    comprobar_operaciones,
    faltas_en_base,
    matrices_vigentes,
)
from agente.servicio.textos import mensaje_espera
from herramientas import REGISTRO, Dependencias
from nucleo.errores import ErrorConfiguracion
from nucleo.operacion import Campo, OperacionConEfecto
from nucleo.operaciones import CAMBIO, OPERACIONES
from operaciones import carpetas
from operaciones.reembolso.declaracion import REEMBOLSO
from politicas.defectos import DEFECTOS
from politicas.reglas import REGLAS
from politicas.texto_cliente import texto_politica
from politicas.valores import VALORES

PEDIDO = "P-20260917-0041"


def _args_de(herramienta: str) -> set[str]:
    """Los argumentos que el modelo rellena (el esquema de la herramienta, sin el runtime)."""
    construida = REGISTRO[herramienta].crear(Dependencias(pool=None, pasarela=None))  # no se ejecuta
    return set(construida.args)


def _faltas_en_registro(op: OperacionConEfecto) -> list[str]:
    faltas = []
    for nombre in op.herramientas:
        herramienta = REGISTRO.get(nombre)
        if herramienta is None:
            faltas.append(f"la herramienta {nombre} no está en el registro")
            continue
        if herramienta.operacion != op.nombre or not herramienta.efectos:
            faltas.append(f"la herramienta {nombre} no se registró con Herramienta.de_operacion({op.nombre})")
        elif (herramienta.regla, herramienta.decisiones, herramienta.campos_tarjeta) != (
                op.regla, op.decisiones, op.campos):
            faltas.append(f"la herramienta {nombre} no lleva la regla, las decisiones o los campos declarados")
        sin_etiqueta = sorted(_args_de(nombre) - {c.nombre for c in op.campos})
        if sin_etiqueta:
            faltas.append(f"campos de {nombre} sin etiqueta en la tarjeta: {', '.join(sin_etiqueta)}")
    return faltas


def _faltas_de_regla(op: OperacionConEfecto) -> list[str]:
    regla = REGLAS.get(op.regla)
    if regla is None:
        return [f"la regla «{op.regla}» no está en politicas/reglas (REGLAS)"]
    if regla.hechos != op.hechos:
        return [f"la regla «{op.regla}» lee {regla.hechos}, no los hechos declarados {op.hechos}"]
    return []


def _faltas_de_textos(op: OperacionConEfecto) -> list[str]:
    args = {"pedido": PEDIDO, **{c.nombre: "10.00" if c.dinero else c.nombre for c in op.campos
                                 if c.nombre != "pedido"}}
    texto = op.texto_espera(args)
    if not texto.strip():
        return ["el texto de espera para el cliente está vacío"]
    faltas = [] if PEDIDO in texto else [f"el texto de espera no dice el pedido: «{texto}»"]
    aviso = mensaje_espera({"action_requests": [{"name": op.herramienta, "args": args}]}, REGISTRO)
    if texto not in aviso:
        faltas.append("el aviso de espera al cliente no usa el texto declarado")
    return faltas


def _faltas_offline(op: OperacionConEfecto) -> list[str]:
    intencion = op.offline.intencion
    faltas = []
    if intencion not in PASOS:
        faltas.append(f"el modelo offline no tiene pasos para la intención «{intencion}»")
    if intencion not in INTENCIONES:
        faltas.append(f"el modelo offline no lee la intención «{intencion}»")
    leidas = [t.tipo for t in tareas(f"Quiero un {op.offline.palabra} del pedido {PEDIDO}", [])]
    if leidas != [intencion]:
        faltas.append(f"el modelo offline lee «{op.offline.palabra}» como {leidas}, no como «{intencion}»")
    return faltas


def _faltas_de_evaluacion(op: OperacionConEfecto) -> list[str]:
    faltas = [f"la instantánea de la evaluación no registra la tabla {t}"
              for t in op.instantanea.tablas if t not in TABLAS or t not in tablas_instantanea()]
    cubren = [t.id for t in cargar_tareas()
              if t.esperado.bd.get(op.libro.tabla)
              or any(e.split(":")[0] in op.herramientas for e in t.esperado.escalado)]
    if not cubren:
        faltas.append(f"ninguna tarea de evaluación (agente/evaluacion/tareas) ejecuta o escala "
                      f"{', '.join(op.herramientas)}")
    return faltas


def _faltas_en_datos(op: OperacionConEfecto, conexion) -> list[str]:
    """Lo que se comprueba contra la base de demo: matrices, vista, consultas declaradas."""
    faltas = faltas_en_base(conexion, (op,))
    por_defecto = matrices_vigentes(conexion)[0]
    if op.regla in por_defecto.limites and (
            dict(por_defecto.limites[op.regla]) != dict(op.matriz.limites)
            or por_defecto.dos_firmas_por_encima.get(op.regla) != op.matriz.dos_firmas_por_encima):
        faltas.append(f"las filas por defecto declaradas de «{op.regla}» no son las de la matriz por defecto")
    consultas = [*op.instantanea.tablas.values(), *(n.sql for n in op.instantanea.numeros),
                 "SELECT " + op.historial.sql.replace("%(cliente)s", "'C-0001'").replace("%(dias)s", "90")]
    for consulta in consultas:
        with conexion.transaction(force_rollback=True):
            try:
                conexion.execute(consulta)
            except Exception as exc:  # noqa: BLE001 - la falta es el error, sea cual sea
                faltas.append(f"una consulta declarada no corre en la base: {str(exc).splitlines()[0]}")
    for campo in re.findall(r"\{(\w+)(?::euros)?\}", op.historial.detalle):
        if f"'{campo}'" not in op.historial.sql:
            faltas.append(f"el detalle del historial enseña {campo}, que su consulta no trae")
    return faltas


def _faltas_de_politica(op: OperacionConEfecto) -> list[str]:
    """Un valor de la política (con su defecto) compara con su regla; con carpeta, su frase."""
    faltas = []
    if not any(v.regla == op.regla for v in VALORES.values()):
        faltas.append(f"ningún valor de la política (politicas.valores.VALORES) es el umbral de la regla «{op.regla}»")
    if op.nombre not in carpetas.nombres():
        return faltas
    politica = carpetas.pieza(op.nombre, "politica")
    for argumentos in politica.VALORES:
        nombre = argumentos["nombre"]
        if nombre not in VALORES:
            faltas.append(f"el valor {nombre} de {op.nombre}/politica.py no está en politicas.valores.VALORES")
        elif DEFECTOS.get(nombre) != argumentos["defecto"] or VALORES[nombre].defecto != argumentos["defecto"]:
            faltas.append(f"el defecto de {nombre} no es el de {op.nombre}/politica.py")
    linea = politica.texto_cliente(DEFECTOS)
    if not linea.strip() or linea not in texto_politica("Tienda", DEFECTOS):
        faltas.append(f"la política que lee el cliente no dice nada de {op.nombre} ({op.nombre}/politica.py)")
    return faltas


def _faltas_de_prompt(op: OperacionConEfecto) -> list[str]:
    return [f"el prompt del modelo no nombra la herramienta {nombre} ({op.nombre}/prompt.md)"
            for nombre in op.herramientas if f"`{nombre}`" not in PROMPT_BASE]


def _faltas_de_carpeta(op: OperacionConEfecto) -> list[str]:
    """Con carpeta, cada pieza (``carpetas.faltan``) y que la carpeta es de esta operación."""
    if op.nombre not in carpetas.nombres():
        return []
    faltas = carpetas.faltan(carpetas.CARPETA / op.nombre)
    if carpetas.pieza(op.nombre, "declaracion").OPERACION is not op:
        faltas.append(f"la carpeta operaciones/{op.nombre} declara otra operación")
    return faltas


def faltas(op: OperacionConEfecto, conexion) -> list[str]:
    """Todo lo que le falta a ``op`` en el producto y en la base de demo (vacía = completa)."""
    return [*_faltas_de_regla(op), *_faltas_en_registro(op), *_faltas_de_textos(op),
            *_faltas_offline(op), *_faltas_de_evaluacion(op), *_faltas_de_politica(op),
            *_faltas_de_prompt(op), *_faltas_de_carpeta(op), *_faltas_en_datos(op, conexion)]


# -- las declaraciones de la tienda están completas ---------------------------------------------


@pytest.mark.parametrize("op", OPERACIONES, ids=lambda op: op.nombre)
def test_cada_operacion_declarada_esta_completa(op, conexion):
    encontradas = faltas(op, conexion)
    assert encontradas == [], f"a la operación {op.nombre} le falta:\n- " + "\n- ".join(encontradas)


def test_las_operaciones_no_comparten_nombre_regla_herramienta_ni_tabla():
    for parte in (lambda o: o.nombre, lambda o: o.regla, lambda o: o.libro.tabla, lambda o: o.offline.intencion,
                  lambda o: o.historial.clave):
        valores = [parte(op) for op in OPERACIONES]
        assert len(set(valores)) == len(valores), valores
    herramientas = [h for op in OPERACIONES for h in op.herramientas]
    assert len(set(herramientas)) == len(herramientas)
    # Y toda herramienta con efectos del registro ejecuta una operación declarada.
    assert {h.nombre for h in REGISTRO if h.efectos} == set(herramientas)


# -- y la comprobación falla nombrando lo que falta ----------------------------------------------


QUITAR = [
    pytest.param(REEMBOLSO, {"regla": "reembolso_urgente"},
                 ["la regla «reembolso_urgente» no está en politicas/reglas",
                  "no tiene filas para la regla «reembolso_urgente»",
                  "la herramienta reembolsar no lleva la regla, las decisiones o los campos declarados"],
                 id="regla"),
    pytest.param(REEMBOLSO, {"hechos": ("pedido_existe",)}, ["no los hechos declarados"], id="hechos"),
    pytest.param(CAMBIO, {"campos": (Campo(nombre="pedido", etiqueta="Pedido"),
                                     Campo(nombre="sku_original", etiqueta="Producto original"))},
                 ["campos de sustituir sin etiqueta en la tarjeta: sku_nuevo"], id="campos-tarjeta"),
    pytest.param(REEMBOLSO, {"texto_espera": lambda _args: ""},
                 ["el texto de espera para el cliente está vacío"], id="texto-cliente"),
    pytest.param(CAMBIO, {"offline": dataclasses.replace(CAMBIO.offline, intencion="canje")},
                 ["el modelo offline no tiene pasos para la intención «canje»",
                  "el modelo offline no lee la intención «canje»"], id="intencion-offline"),
    pytest.param(CAMBIO, {"offline": dataclasses.replace(CAMBIO.offline, palabra="trueque")},
                 ["el modelo offline lee «trueque» como"], id="palabra-offline"),
    pytest.param(REEMBOLSO, {"herramientas": ("abonar",), "libro": dataclasses.replace(REEMBOLSO.libro, tabla="abonos")},
                 ["la herramienta abonar no está en el registro",
                  "el aviso de espera al cliente no usa el texto declarado",
                  "ninguna tarea de evaluación (agente/evaluacion/tareas) ejecuta o escala abonar",
                  "el prompt del modelo no nombra la herramienta abonar"],
                 id="herramienta-y-tarea"),
    pytest.param(CAMBIO, {"regla": "canje"},
                 ["ningún valor de la política (politicas.valores.VALORES) es el umbral de la regla «canje»"],
                 id="valores-politica"),
    pytest.param(REEMBOLSO, {"nombre": "abono"}, ["la vista efectos no incluye la operación abono"],
                 id="vista-efectos"),
    pytest.param(CAMBIO, {"libro": dataclasses.replace(CAMBIO.libro, tabla="canjes")},
                 ["la vista efectos no incluye la operación sustitucion (tabla canjes)"], id="tabla-libro"),
    pytest.param(CAMBIO, {"matriz": dataclasses.replace(CAMBIO.matriz, dos_firmas_por_encima=Decimal("800"))},
                 ["las filas por defecto declaradas de «sustitucion» no son las de la matriz por defecto"],
                 id="filas-matriz"),
    pytest.param(REEMBOLSO, {"instantanea": dataclasses.replace(
        REEMBOLSO.instantanea, tablas={"abonos": "SELECT * FROM abonos"})},
                 ["la instantánea de la evaluación no registra la tabla abonos",
                  'una consulta declarada no corre en la base: relation "abonos" does not exist'],
                 id="instantanea"),
    pytest.param(REEMBOLSO, {"historial": dataclasses.replace(REEMBOLSO.historial, detalle="{pedido} · {motivo}")},
                 ["el detalle del historial enseña motivo, que su consulta no trae"], id="historial"),
]


@pytest.mark.parametrize(("op", "cambios", "esperadas"), QUITAR)
def test_la_comprobacion_nombra_la_parte_que_falta(op, cambios, esperadas, conexion):
    encontradas = faltas(dataclasses.replace(op, **cambios), conexion)
    for esperada in esperadas:
        assert any(esperada in f for f in encontradas), (esperada, encontradas)


def test_cada_carpeta_es_una_operacion_declarada():
    assert set(carpetas.nombres()) <= {op.nombre for op in OPERACIONES}
    assert carpetas.nombres(), "ninguna operación tiene carpeta en operaciones/"


def test_sin_su_frase_para_el_cliente_la_comprobacion_lo_nombra(monkeypatch, conexion):
    (nombre, *_) = carpetas.nombres()
    monkeypatch.setattr(carpetas.pieza(nombre, "politica"), "texto_cliente", lambda _valores: "")
    op = carpetas.pieza(nombre, "declaracion").OPERACION
    assert f"la política que lee el cliente no dice nada de {nombre} ({nombre}/politica.py)" in faltas(op, conexion)


def _carpeta_copiada(tmp_path: Path) -> Path:
    (nombre, *_) = carpetas.nombres()
    copia = tmp_path / nombre
    shutil.copytree(carpetas.CARPETA / nombre, copia, ignore=shutil.ignore_patterns("__pycache__"))
    assert carpetas.faltan(copia) == []
    return copia


@pytest.mark.parametrize("pieza", list(carpetas.PIEZAS))
def test_sin_una_pieza_de_su_carpeta_la_comprobacion_la_nombra(pieza, tmp_path):
    copia = _carpeta_copiada(tmp_path)
    (copia / pieza).unlink()
    assert carpetas.faltan(copia) == [f"{copia.name}/{pieza}"]


@pytest.mark.parametrize(("pieza", "nombre"), [(p, n) for p, nombres in carpetas.PIEZAS.items() for n in nombres or ()])
def test_una_pieza_sin_lo_que_debe_definir_se_nombra(pieza, nombre, tmp_path):
    copia = _carpeta_copiada(tmp_path)
    texto = (copia / pieza).read_text(encoding="utf-8")
    # Se renombra donde se define (def, class, asignación o import), no donde se usa.
    cambiado = re.sub(rf"^((?:async\s+)?def\s+|class\s+|){re.escape(nombre)}\b(?=\s*[:=(])",
                      rf"\g<1>{nombre}_antes", texto, flags=re.M)
    cambiado = re.sub(rf"(import\s.*\b){re.escape(nombre)}\b", rf"\g<1>{nombre} as {nombre}_antes", cambiado)
    (copia / pieza).write_text(cambiado, encoding="utf-8")
    assert carpetas.faltan(copia) == [f"{copia.name}/{pieza}: {nombre}"]


@pytest.mark.parametrize(("cambios", "mensaje"), [
    ({"titulo": ""}, "operación reembolso: título de la tarjeta: falta el texto"),
    ({"campos": ()}, "operación reembolso: la tarjeta no enseña ningún campo"),
    ({"campos_editables": ("motivo_interno",)}, "campos editables que la tarjeta no enseña: ['motivo_interno']"),
    ({"herramientas": ()}, "operación reembolso: ninguna herramienta"),
    ({"hechos": ()}, "operación reembolso: la regla no lee ningún hecho"),
    ({"regla": "Reembolso"}, "operación reembolso: regla no válida"),
    ({"decisiones": ("aprobar",)}, "decisiones vacías o desconocidas"),
])
def test_la_declaracion_rechaza_al_construirse_lo_que_no_puede_faltar(cambios, mensaje):
    with pytest.raises(ValueError, match=re.escape(mensaje)):
        dataclasses.replace(REEMBOLSO, **cambios)


# -- una fila de matriz que falte no arranca el servicio ----------------------------------------


def _matriz_a_mano(conexion, tienda: str | None, sin: str) -> int:
    """Una versión nueva con todas las reglas declaradas menos ``sin``, escrita en SQL
    (``fijar_matriz`` ya no la admite): la de una base de antes de la operación o tocada a
    mano. Devuelve su versión."""
    version = conexion.execute(
        "SELECT coalesce(max(version), 0) + 1 AS v FROM matrices_autoridad WHERE tienda IS NOT DISTINCT FROM %s",
        (tienda,)).fetchone()["v"]
    matriz_id = conexion.execute(
        "INSERT INTO matrices_autoridad (tienda, version, creada_por) VALUES (%s, %s, 'a-mano') RETURNING id",
        (tienda, version)).fetchone()["id"]
    for regla in (op.regla for op in OPERACIONES if op.regla != sin):
        conexion.execute("INSERT INTO reglas_autoridad (matriz_id, regla) VALUES (%s, %s)", (matriz_id, regla))
        conexion.execute("INSERT INTO limites_autoridad (matriz_id, regla, rol, limite) "
                         "VALUES (%s, %s, 'encargado', 300), (%s, %s, 'regional', NULL)",
                         (matriz_id, regla, matriz_id, regla))
    return version


def test_fijar_una_matriz_sin_las_filas_de_una_operacion_se_rechaza(conexion):
    from agente.servicio.politica.gestion_autoridad import fijar_matriz

    por_rol = {"encargado": Decimal("300"), "gerente": Decimal("1000"), "regional": None}
    with pytest.raises(ValueError, match="faltan las filas de .*sustitucion"):
        fijar_matriz(conexion, tienda="talavera", limites={"reembolso": por_rol},
                     dos_firmas_por_encima={}, autor="ger-talavera")
    assert len(matrices_vigentes(conexion)) == 1  # solo la por defecto


def test_una_matriz_de_tienda_sin_una_regla_no_arranca_el_servicio(conexion, bd_url):
    from agente.servicio.fabrica import crear_servicio
    from tests.apoyo.fabricas import ajustes_prueba

    assert faltas_en_base(conexion) == []
    _matriz_a_mano(conexion, "talavera", sin="sustitucion")
    # Todas las reglas declaradas menos la sustitución: una sola falta, la suya.
    assert faltas_en_base(conexion) == [
        "la matriz de autoridad de la tienda talavera (versión 1) no tiene filas para la regla «sustitucion» "
        "de la operación sustitucion: sin ellas pediría un regional para cualquier importe"]
    with pytest.raises(ErrorConfiguracion, match="tienda talavera .* «sustitucion»"):
        comprobar_operaciones(conexion)
    with pytest.raises(ErrorConfiguracion, match="Si la operación es nueva, migra"):
        crear_servicio(ajustes_prueba(bd_url), url=bd_url)

    (nueva,) = completar_matrices(conexion, autor="ger-talavera")
    assert (nueva.tienda, nueva.version) == ("talavera", 2)
    assert nueva.limites["sustitucion"] == CAMBIO.matriz.limites
    assert nueva.limites["reembolso"] == {"encargado": Decimal("300.00"), "regional": None}  # la suya, intacta
    assert faltas_en_base(conexion) == []
    crear_servicio(ajustes_prueba(bd_url), url=bd_url).cerrar()


def test_la_matriz_por_defecto_sin_una_regla_no_arranca(conexion):
    version = _matriz_a_mano(conexion, None, sin="reembolso")
    (falta,) = faltas_en_base(conexion)
    assert falta.startswith(f"la matriz de autoridad por defecto (versión {version}) no tiene filas para la regla «reembolso»")
    # Las de antes no se miran: las relee solo quien decidió con ellas.
    with pytest.raises(ErrorConfiguracion, match="por defecto"):
        comprobar_operaciones(conexion)
