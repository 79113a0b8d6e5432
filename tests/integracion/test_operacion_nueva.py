"""Una operación con efecto de usar y tirar, añadida solo con su declaración, y todo la ve.

«Cancelación exprés con reembolso; por encima de 200 EUR firma un gerente» (distinta de la
cancelación de verdad, ``operaciones.cancelacion.declaracion.CANCELACION``): una tabla (la
migración que traería), su ``OperacionConEfecto``, su herramienta
(``Herramienta.de_operacion``) y su regla. Sin tocar ningún módulo del producto, la ven
el arranque (le faltan filas de matriz y su rama en la vista ``efectos``), la política,
la matriz de autoridad, el agente (la pausa y el texto al cliente), la tarjeta del
encargado, la auditoría, el historial del cliente y la instantánea de la evaluación.
"""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from langchain.tools import ToolRuntime, tool
from langchain_core.messages import AIMessage
from langgraph.checkpoint.postgres import PostgresSaver
from pydantic import BaseModel, Field

from agente.construir import construir_agente
from agente.evaluacion import instantanea
from agente.servicio.auditoria.informe import informe
from agente.servicio.decisiones.ficha import historial_cliente
from agente.servicio.fachada import Servicio
from agente.servicio.politica.comprobar_operaciones import (
    completar_matrices,
    comprobar_operaciones,
    faltas_en_base,
)
from agente.web.esquemas import bandeja as esquemas_bandeja
from herramientas import REGISTRO, Herramienta
from nucleo import dinero
from nucleo.contexto import contexto_de
from nucleo.errores import ErrorConfiguracion
from nucleo.operacion import (
    Campo,
    EnHistorial,
    EnInstantanea,
    EnLibro,
    EnMatriz,
    Numeracion,
    Offline,
    OperacionConEfecto,
)
from nucleo.operaciones import OPERACIONES, vista_efectos_sql
from politicas import REGLAS, Dictamen, PoliticaAprobacion, Regla
from politicas.lectura_matriz import leer_matriz
from politicas.matriz_autoridad import autoridad_necesaria
from tests.apoyo.modelo_guion import guion, llamada

PEDIDO = "P-20260917-0041"  # de C-0001, en talavera

# La migración que traería la operación: su tabla, con la forma de la vista efectos.
TABLA_SQL = """
CREATE TABLE cancelaciones_expres (
    id            bigserial PRIMARY KEY,
    numero        text GENERATED ALWAYS AS ('CX-' || lpad(id::text, 6, '0')) STORED,
    thread_id     text NOT NULL,
    tool_call_id  text NOT NULL,
    pedido_id     text NOT NULL REFERENCES pedidos(id),
    cliente_id    text NOT NULL REFERENCES clientes(id),
    tienda        text NOT NULL REFERENCES tiendas(id),
    importe       numeric(12,2) NOT NULL CHECK (importe > 0),
    motivo        text,
    aprobado_por  text,
    creada        timestamptz NOT NULL DEFAULT now(),
    UNIQUE (thread_id, tool_call_id)
)
"""
INSERT_CANCELACION_SQL = """
INSERT INTO cancelaciones_expres (thread_id, tool_call_id, pedido_id, cliente_id, tienda, importe, motivo, aprobado_por)
VALUES (%(thread_id)s, %(tool_call_id)s, %(pedido)s, %(cliente_id)s, %(tienda)s, %(importe)s, %(motivo)s,
        %(aprobado_por)s)
ON CONFLICT (thread_id, tool_call_id) DO UPDATE SET motivo = EXCLUDED.motivo
RETURNING numero
"""

CANCELACION = OperacionConEfecto(
    nombre="cancelacion_expres",
    herramientas=("cancelar_expres",),
    regla="cancelacion_expres",
    hechos=("pedido_existe", "estado_pedido"),
    matriz=EnMatriz(singular="esta cancelación", plural="cancelaciones_expres",
                    limites={"encargado": Decimal("200.00"), "gerente": None, "regional": None}),
    libro=EnLibro(tabla="cancelaciones_expres", prefijo="CX", importe="importe", creado="creada",
                  movimientos=("reembolso",)),
    titulo="Cancelación de pedido",
    decisiones=("approve", "reject"),
    campos=(Campo(nombre="pedido", etiqueta="Pedido"),
            Campo(nombre="importe", etiqueta="Importe a devolver", dinero=True),
            Campo(nombre="motivo", etiqueta="Motivo del cliente")),
    historial=EnHistorial(
        clave="cancelaciones_expres", etiqueta="Cancelación", plural="cancelaciones_expres", detalle="{pedido} · {importe:euros}",
        sql="""coalesce((SELECT jsonb_agg(jsonb_build_object('numero', c.numero, 'pedido', c.pedido_id,
                   'importe', c.importe::text, 'fecha', c.creada) ORDER BY c.creada DESC)
               FROM cancelaciones_expres c WHERE c.cliente_id = %(cliente)s
                AND c.creada >= now() - make_interval(days => %(dias)s)), '[]')"""),
    texto_espera=lambda args: f"la cancelación del pedido {args.get('pedido')}",
    offline=Offline(intencion="cancelacion_expres", patron=r"\bcancel\w*", palabra="cancelación",
                    clave_numero="cancelacion_expres"),
    instantanea=EnInstantanea(
        tablas={"cancelaciones_expres": "SELECT pedido_id AS pedido, importe FROM cancelaciones_expres ORDER BY pedido_id, importe"},
        numeros=(Numeracion(marcador="cancelacion_expres", prefijo="CX", sql="SELECT numero, id FROM cancelaciones_expres"),),
    ),
)
TODAS = (*OPERACIONES, CANCELACION)

# La regla: toda cancelación la mira una persona; la firma autoriza el importe.
REGLA = Regla(
    nombre=CANCELACION.regla, hechos=CANCELACION.hechos,
    decidir=lambda _hechos, args: Dictamen(motivos=("toda cancelación la revisa una persona",),
                                          importe=dinero.importe_o_none(args.get("importe"))),
)


class CancelarArgs(BaseModel):
    pedido: str = Field(description="El pedido que se cancela.")
    importe: str = Field(description="Lo que se devuelve, en euros («150.00»).")
    motivo: str = Field(description="Por qué lo cancela el cliente.")


def crear_cancelar_pedido(dependencias):
    pool = dependencias.pool

    @tool("cancelar_expres", args_schema=CancelarArgs)
    def cancelar_expres(pedido: str, importe: str, motivo: str, runtime: ToolRuntime) -> str:
        """Cancela un pedido aún no entregado y devuelve lo pagado."""
        ctx = contexto_de(runtime)
        with pool.connection() as c:
            numero = c.execute(INSERT_CANCELACION_SQL, {
                "thread_id": runtime.config["configurable"]["thread_id"], "tool_call_id": runtime.tool_call_id,
                "pedido": pedido, "cliente_id": ctx.cliente_id, "tienda": ctx.tienda,
                "importe": dinero.importe(importe), "motivo": motivo,
                "aprobado_por": (runtime.config.get("metadata") or {}).get("aprobado_por"),
            }).fetchone()["numero"]
        return json.dumps({"cancelacion_expres": numero, "pedido": pedido, "importe": importe})

    return cancelar_expres


HERRAMIENTA = Herramienta.de_operacion(CANCELACION, nombre="cancelar_expres", crear=crear_cancelar_pedido)


@pytest.fixture
def con_cancelaciones(conexion):
    """La base de demo con la migración de la operación nueva: tabla y vista efectos."""
    conexion.execute(TABLA_SQL)
    # Antes de sus filas de matriz y de su rama en la vista, el arranque la rechaza.
    faltas = faltas_en_base(conexion, TODAS)
    assert [f.split(" (")[0] for f in faltas] == [
        "la matriz de autoridad por defecto", "la vista efectos no incluye la operación cancelacion_expres"]
    with pytest.raises(ErrorConfiguracion, match="regla «cancelacion_expres».*un regional para cualquier importe"):
        comprobar_operaciones(conexion, TODAS)
    conexion.execute(vista_efectos_sql(TODAS))
    (nueva,) = completar_matrices(conexion, TODAS)
    assert nueva.tienda is None and nueva.limites["cancelacion_expres"]["encargado"] == Decimal("200.00")
    comprobar_operaciones(conexion, TODAS)
    return conexion


def test_la_matriz_de_autoridad_firma_la_operacion_nueva_con_sus_filas(con_cancelaciones):
    matriz = leer_matriz(con_cancelaciones, tienda="talavera")
    assert autoridad_necesaria(matriz, "cancelacion_expres", "150.00").rol_minimo == "encargado"
    assert autoridad_necesaria(matriz, "cancelacion_expres", "250.00").rol_minimo == "gerente"
    # Las de siempre, igual que antes.
    assert autoridad_necesaria(matriz, "reembolso", "350.00").rol_minimo == "gerente"


def test_el_agente_la_pausa_el_encargado_la_ve_y_la_firma_y_la_auditoria_la_cuenta(
        con_cancelaciones, pool, pasarela):
    conexion = con_cancelaciones
    registro = REGISTRO.con(HERRAMIENTA)
    politica = PoliticaAprobacion(pool=pool, reglas=registro.reglas(), catalogo={**REGLAS, REGLA.nombre: REGLA})
    cancelar = llamada("cancelar_expres", pedido=PEDIDO, importe="150.00", motivo="ya no lo necesito")
    modelo = guion(AIMessage("", tool_calls=[cancelar]), "Pedido cancelado.")
    agente = construir_agente(modelo, PostgresSaver(pool), pool=pool, pasarela=pasarela, registro=registro,
                              politica=politica, operaciones=TODAS)
    servicio = Servicio(pool=pool, agente=agente, registro=registro)
    ctx = servicio.contexto_de_cliente("C-0001")
    hilo = servicio.iniciar_conversacion(ctx)

    # El agente: la política pide firma y el cliente lee el texto declarado.
    respuesta = servicio.conversar(hilo, "Cancela mi pedido, por favor", ctx)
    assert respuesta.estado == "esperando_aprobacion"
    assert f"He preparado la cancelación del pedido {PEDIDO}; queda pendiente" in respuesta.mensaje_cliente

    # La tarjeta: título, etiquetas y requisito (de sus filas de la matriz: un encargado).
    tarjeta = esquemas_bandeja.aprobacion(servicio.aprobacion(hilo, tienda="talavera"), registro)
    (accion,) = tarjeta["acciones"]
    assert accion["titulo"] == "Cancelación de pedido"
    assert accion["descripcion"].splitlines()[0] == "Cancelación de pedido para Ana García López (cliente C-0001)."
    assert "Importe a devolver: 150,00 EUR.\nMotivo del cliente: ya no lo necesito." in accion["descripcion"]
    assert [(c["campo"], c["etiqueta"], c["dinero"]) for c in accion["campos"]] == [
        ("pedido", "Pedido", False), ("importe", "Importe a devolver", True), ("motivo", "Motivo del cliente", False)]
    assert accion["motivos"] == ["toda cancelación la revisa una persona"]
    assert (tarjeta["requisito"]["rol_minimo"], tarjeta["requisito"]["importe"]) == ("encargado", "150.00")

    final = servicio.decidir(hilo, "enc-talavera", [{"type": "approve"}])
    assert final.estado == "respondida" and final.mensaje_cliente == "Pedido cancelado."
    assert conexion.execute("SELECT numero, aprobado_por FROM cancelaciones_expres").fetchall() == [
        {"numero": "CX-000001", "aprobado_por": "enc-talavera"}]

    # La auditoría: la firmada cuadra; una que alguien escribe a mano sin firma, no.
    limpio = informe(conexion)
    assert (limpio["sin_firma"], limpio["firmas"]) == ([], [])
    conexion.execute(INSERT_CANCELACION_SQL, {
        "thread_id": hilo, "tool_call_id": "a-mano", "pedido": PEDIDO, "cliente_id": "C-0001",
        "tienda": "talavera", "importe": Decimal("90.00"), "motivo": "a mano", "aprobado_por": None})
    assert [(e["tipo"], e["numero"], e["importe"]) for e in informe(conexion)["sin_firma"]] == [
        ("cancelacion_expres", "CX-000002", Decimal("90.00"))]

    # El historial del cliente en la ficha y la instantánea de la evaluación.
    historial = historial_cliente(conexion, "C-0001", operaciones=TODAS)
    assert [(c["numero"], c["importe"]) for c in historial["cancelaciones_expres"]] == [
        ("CX-000002", "90.00"), ("CX-000001", "150.00")]
    assert historial["tipos"][-1] == {"clave": "cancelaciones_expres", "etiqueta": "Cancelación",
                                      "plural": "cancelaciones_expres", "detalle": "{pedido} · {importe:euros}"}
    assert instantanea.instantanea(conexion, TODAS)["cancelaciones_expres"] == [
        {"pedido": PEDIDO, "importe": "90.00"}, {"pedido": PEDIDO, "importe": "150.00"}]
    assert instantanea.numeros(conexion, TODAS)["cancelacion_expres"] == ["CX-000001", "CX-000002"]
    assert instantanea.efectos(conexion, TODAS) == instantanea.efectos(conexion) + 2
