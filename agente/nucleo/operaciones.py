"""Las operaciones con efecto de la tienda: reembolso, cambio de producto y cambio de dirección
de envío, declaradas una vez.

``OPERACIONES`` es la única lista de clases de efecto; el registro de herramientas es la
única lista de herramientas. Quien necesite saber algo de una operación (su regla, sus
filas de la matriz, su tabla, sus etiquetas, su texto para el cliente...) lo lee de aquí
y recorre ``OPERACIONES`` en vez de nombrar «reembolso» o «sustitución».

Añadir una operación: su declaración aquí; su herramienta en
el registro (``Herramienta.de_operacion``); su regla en ``politicas/reglas``; una
migración con su tabla, las filas de la matriz por defecto (``EnMatriz``) y la vista
``efectos`` de ``vista_efectos_sql``; una tarea de evaluación. Lo que falte lo nombran el
arranque del servicio (``agente.servicio.politica.comprobar_operaciones``) y
``tests/test_operaciones_declaradas.py``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

from agente.nucleo import dinero
from agente.nucleo.operacion import (
    Campo,
    EnHistorial,
    EnInstantanea,
    EnLibro,
    EnMatriz,
    Numeracion,
    Offline,
    OperacionConEfecto,
)

__all__ = [
    "CAMBIO",
    "CANCELACION",
    "DIRECCION",
    "COLUMNAS_EFECTOS",
    "MOTIVOS_REENVIO",
    "OPERACIONES",
    "REEMBOLSO",
    "VALE",
    "VALE_DIAS_CADUCIDAD_DEFECTO",
    "VALE_IMPORTE_MAX_DEFECTO",
    "VALE_PORCENTAJE_MAX_DEFECTO",
    "VALE_VENTANA_DIAS",
    "REENVIO",
    "por_herramienta",
    "por_regla",
    "vista_efectos_sql",
]

# Las filas de la matriz por defecto de sql/008 (las dos reglas, iguales).
_LIMITES_POR_DEFECTO = {"encargado": Decimal("300.00"), "gerente": Decimal("1000.00"), "regional": None}
_DOS_FIRMAS_POR_DEFECTO = Decimal("500.00")


def _espera_reembolso(args: Mapping[str, Any]) -> str:
    try:
        importe = dinero.eur(dinero.importe(args.get("importe")))
    except Exception:  # un importe ilegible no debe romper el aviso al cliente
        importe = "el importe indicado"
    return f"el reembolso de {importe} del pedido {args.get('pedido')}"


def _espera_cambio(args: Mapping[str, Any]) -> str:
    return (
        f"el cambio de {args.get('sku_original')} por {args.get('sku_nuevo')} "
        f"del pedido {args.get('pedido')}"
    )


HISTORIAL_REEMBOLSOS_SQL = """coalesce((SELECT jsonb_agg(jsonb_build_object(
             'numero', r.numero, 'pedido', r.pedido_id, 'importe', r.importe::text,
             'estado', r.estado, 'concepto', r.concepto, 'fecha', r.creado)
             ORDER BY r.creado DESC)
            FROM reembolsos r WHERE r.cliente_id = %(cliente)s
             AND r.creado >= now() - make_interval(days => %(dias)s)), '[]')"""
HISTORIAL_CAMBIOS_SQL = """coalesce((SELECT jsonb_agg(jsonb_build_object(
             'numero', s.numero, 'pedido', s.pedido_id, 'estado', s.estado, 'fecha', s.creada,
             'producto_original', po.nombre, 'producto_nuevo', pn.nombre)
             ORDER BY s.creada DESC)
            FROM sustituciones s
            JOIN productos po ON po.sku = s.sku_original
            JOIN productos pn ON pn.sku = s.sku_nuevo
            WHERE s.cliente_id = %(cliente)s
             AND s.creada >= now() - make_interval(days => %(dias)s)), '[]')"""

INSTANTANEA_REEMBOLSOS_SQL = """
SELECT pedido_id AS pedido, importe, concepto, estado,
       coalesce((SELECT jsonb_agg(x ORDER BY x) FROM jsonb_array_elements(lineas) x), '[]') AS lineas
FROM reembolsos ORDER BY pedido_id, concepto, importe
"""
INSTANTANEA_SUSTITUCIONES_SQL = """
SELECT pedido_id AS pedido, sku_original, sku_nuevo, diferencia
FROM sustituciones ORDER BY pedido_id, sku_original, sku_nuevo
"""
INSTANTANEA_COBROS_SQL = """
SELECT pedido_id AS pedido, importe, estado FROM cobros ORDER BY pedido_id, importe
"""

REEMBOLSO = OperacionConEfecto(
    nombre="reembolso",
    herramientas=("reembolsar",),
    regla="reembolso",
    hechos=("pedido_existe", "estado_pedido", "entregado_en", "dias_entregado",
            "devoluciones_recientes", "elegibilidad", "vales_pedido"),
    matriz=EnMatriz(singular="este reembolso", plural="reembolsos",
                    limites=_LIMITES_POR_DEFECTO, dos_firmas_por_encima=_DOS_FIRMAS_POR_DEFECTO),
    libro=EnLibro(tabla="reembolsos", prefijo="RE", importe="importe", creado="creado",
                  movimientos=("reembolso",)),
    titulo="Reembolso",
    decisiones=("approve", "edit", "reject"),
    campos=(
        Campo(nombre="pedido", etiqueta="Pedido"),
        Campo(nombre="importe", etiqueta="Importe", dinero=True),
        Campo(nombre="lineas", etiqueta="Líneas"),
        Campo(nombre="motivo", etiqueta="Motivo del cliente"),
    ),
    campos_editables=("importe",),
    historial=EnHistorial(clave="reembolsos", etiqueta="Reembolso", plural="reembolsos",
                          detalle="{pedido} · {importe:euros} · {estado}", sql=HISTORIAL_REEMBOLSOS_SQL),
    texto_espera=_espera_reembolso,
    offline=Offline(intencion="reembolso", patron=r"\b(?:devol\w*|devuelv\w*|reembols\w*)",
                    palabra="reembolso", clave_numero="reembolso"),
    instantanea=EnInstantanea(
        tablas={"reembolsos": INSTANTANEA_REEMBOLSOS_SQL},
        numeros=(Numeracion(marcador="reembolso", prefijo="RE",
                            sql="SELECT numero, id FROM reembolsos WHERE concepto = 'devolucion'"),),
    ),
)

CAMBIO = OperacionConEfecto(
    nombre="sustitucion",
    herramientas=("sustituir",),
    regla="sustitucion",
    hechos=("pedido_existe", "sku_original_en_pedido", "pvp_original", "pvp_nuevo", "elegibilidad",
            "libres_sku_original", "vales_pedido"),
    matriz=EnMatriz(singular="este cambio", plural="cambios de producto",
                    limites=_LIMITES_POR_DEFECTO, dos_firmas_por_encima=_DOS_FIRMAS_POR_DEFECTO),
    # La diferencia se liquida por la pasarela: a favor, un reembolso; a cargo, un cobro.
    libro=EnLibro(tabla="sustituciones", prefijo="SU", importe="diferencia", creado="creada",
                  movimientos=("reembolso", "cobro")),
    titulo="Cambio de producto",
    decisiones=("approve", "reject"),
    campos=(
        Campo(nombre="pedido", etiqueta="Pedido"),
        Campo(nombre="sku_original", etiqueta="Producto original"),
        Campo(nombre="sku_nuevo", etiqueta="Producto nuevo"),
    ),
    historial=EnHistorial(clave="cambios", etiqueta="Cambio", plural="cambios",
                          detalle="{pedido} · {producto_original} → {producto_nuevo}",
                          sql=HISTORIAL_CAMBIOS_SQL),
    texto_espera=_espera_cambio,
    offline=Offline(intencion="cambio", patron=r"\b(?:cambi\w*|sustitu\w*|reemplaz\w*)",
                    palabra="cambio", clave_numero="sustitucion"),
    instantanea=EnInstantanea(
        tablas={"sustituciones": INSTANTANEA_SUSTITUCIONES_SQL, "cobros": INSTANTANEA_COBROS_SQL},
        numeros=(
            Numeracion(marcador="sustitucion", prefijo="SU", sql="SELECT numero, id FROM sustituciones"),
            Numeracion(marcador="diferencia", prefijo="RE",
                       sql="SELECT numero, id FROM reembolsos WHERE concepto IN ('diferencia', 'anulacion')"),
            Numeracion(marcador="cobro", prefijo="CO", sql="SELECT numero, id FROM cobros"),
        ),
    ),
)


# -- cancelar un pedido sin enviar (issue 27; sql/016_cancelacion.sql) ---------------------------


def _espera_cancelacion(args: Mapping[str, Any]) -> str:
    try:
        importe = dinero.eur(dinero.importe(args.get("importe")))
    except Exception:  # un importe ilegible no debe romper el aviso al cliente
        return f"la cancelación del pedido {args.get('pedido')}"
    return f"la cancelación del pedido {args.get('pedido')} y la devolución de {importe}"


HISTORIAL_CANCELACIONES_SQL = """coalesce((SELECT jsonb_agg(jsonb_build_object(
             'numero', c.numero, 'pedido', c.pedido_id, 'importe', c.importe::text,
             'motivo', c.motivo, 'fecha', c.creada)
             ORDER BY c.creada DESC)
            FROM cancelaciones c WHERE c.cliente_id = %(cliente)s
             AND c.creada >= now() - make_interval(days => %(dias)s)), '[]')"""
INSTANTANEA_CANCELACIONES_SQL = """
SELECT c.pedido_id AS pedido, c.importe, p.estado AS estado_pedido,
       (SELECT count(*)::int FROM compensaciones_unidad u WHERE u.cancelacion_id = c.id) AS unidades
FROM cancelaciones c JOIN pedidos p ON p.id = c.pedido_id ORDER BY c.pedido_id
"""

CANCELACION = OperacionConEfecto(
    nombre="cancelacion",
    herramientas=("cancelar_pedido",),
    regla="cancelacion",
    hechos=("pedido_existe", "estado_pedido", "importe_pedido"),
    # Las mismas filas que el reembolso: lo que sale es dinero devuelto.
    matriz=EnMatriz(singular="esta cancelación", plural="cancelaciones",
                    limites=_LIMITES_POR_DEFECTO, dos_firmas_por_encima=_DOS_FIRMAS_POR_DEFECTO),
    # Lo pagado vuelve con un reembolso de concepto 'cancelacion' (uno por pedido).
    libro=EnLibro(tabla="cancelaciones", prefijo="CA", importe="importe", creado="creada",
                  movimientos=("reembolso",)),
    titulo="Cancelación de pedido",
    decisiones=("approve", "reject"),
    campos=(
        Campo(nombre="pedido", etiqueta="Pedido"),
        Campo(nombre="importe", etiqueta="Importe a devolver", dinero=True),
        Campo(nombre="motivo", etiqueta="Motivo del cliente"),
    ),
    historial=EnHistorial(clave="cancelaciones", etiqueta="Cancelación", plural="cancelaciones",
                          detalle="{pedido} · {importe:euros}", sql=HISTORIAL_CANCELACIONES_SQL),
    texto_espera=_espera_cancelacion,
    offline=Offline(intencion="cancelacion",
                    # «cancelado» o «anulada» describen, no piden: no cuentan.
                    patron=r"\b(?:cancel|anul)(?!ad[oa]s?\b)\w*",
                    palabra="cancelación", clave_numero="cancelacion"),
    instantanea=EnInstantanea(
        tablas={"cancelaciones": INSTANTANEA_CANCELACIONES_SQL},
        numeros=(Numeracion(marcador="cancelacion", prefijo="CA", sql="SELECT numero, id FROM cancelaciones"),
                 Numeracion(marcador="devolucion_cancelacion", prefijo="RE",
                            sql="SELECT numero, id FROM reembolsos WHERE concepto = 'cancelacion'")),
    ),
)


# -- cambio de dirección de envío (issue 27, operación 4) -----------------------------------------


def _espera_direccion(args: Mapping[str, Any]) -> str:
    destino = " ".join(str(args.get(c) or "").strip() for c in ("codigo_postal", "localidad")).strip()
    return f"el cambio de la dirección de envío del pedido {args.get('pedido')}" + (
        f" a {args.get('calle')}, {destino}" if args.get("calle") and destino else "")


HISTORIAL_DIRECCIONES_SQL = """coalesce((SELECT jsonb_agg(jsonb_build_object(
             'numero', d.numero, 'pedido', d.pedido_id, 'fecha', d.creado,
             'anterior', coalesce(d.calle_anterior || ', ' || d.codigo_postal_anterior || ' '
                                  || d.localidad_anterior, 'sin dirección'),
             'nueva', d.calle || ', ' || d.codigo_postal || ' ' || d.localidad)
             ORDER BY d.creado DESC)
            FROM cambios_direccion d WHERE d.cliente_id = %(cliente)s
             AND d.creado >= now() - make_interval(days => %(dias)s)), '[]')"""
INSTANTANEA_DIRECCIONES_SQL = """
SELECT pedido_id AS pedido, provincia_anterior, calle, codigo_postal, localidad, provincia
FROM cambios_direccion ORDER BY pedido_id, codigo_postal, calle
"""

# No mueve dinero ni género: su sitio en el libro es cambios_direccion (la antigua y la
# nueva), sin movimiento de pasarela. El «importe» de la matriz es el del pedido.
DIRECCION = OperacionConEfecto(
    nombre="direccion",
    herramientas=("cambiar_direccion",),
    regla="direccion",
    hechos=("pedido_existe", "estado_pedido", "importe_pedido", "direccion_envio"),
    matriz=EnMatriz(singular="este cambio de dirección", plural="cambios de dirección",
                    limites={"encargado": Decimal("1000.00"), "gerente": None, "regional": None}),
    libro=EnLibro(tabla="cambios_direccion", prefijo="CD", importe="importe", creado="creado"),
    titulo="Cambio de dirección de envío",
    decisiones=("approve", "reject"),
    campos=(
        Campo(nombre="pedido", etiqueta="Pedido"),
        Campo(nombre="calle", etiqueta="Calle y número nuevos"),
        Campo(nombre="codigo_postal", etiqueta="Código postal nuevo"),
        Campo(nombre="localidad", etiqueta="Localidad nueva"),
    ),
    historial=EnHistorial(clave="direcciones", etiqueta="Cambio de dirección", plural="cambios de dirección",
                          detalle="{pedido} · {anterior} → {nueva}", sql=HISTORIAL_DIRECCIONES_SQL),
    texto_espera=_espera_direccion,
    offline=Offline(
        intencion="direccion",
        # «cambia la dirección de envío», «cambio de dirección», «nueva dirección de entrega»:
        # empieza donde el verbo para que la cláusula no se lea también como cambio de producto.
        patron=(r"\b(?:(?:cambi\w*|modific\w*|actualiz\w*|corrig\w*|correg\w*|pon\w*)\s+"
                r"(?:[\w-]+\s+){0,5}?direccion\w*|(?:nueva\s+)?direccion\s+de\s+(?:envio|entrega)|"
                r"(?:nueva|otra)\s+direccion)"),
        palabra="cambio de dirección", clave_numero="cambio_direccion"),
    instantanea=EnInstantanea(
        tablas={"cambios_direccion": INSTANTANEA_DIRECCIONES_SQL},
        numeros=(Numeracion(marcador="cambio_direccion", prefijo="CD",
                            sql="SELECT numero, id FROM cambios_direccion"),),
    ),
)


# -- vale de compensación (issue 27, sql/018_vale.sql) ------------------------------------------

# Los defectos de la política (politicas.valores los declara con su dominio) y la ventana
# de «un vale por cliente»: los lee también el modelo offline para proponer un importe.
VALE_PORCENTAJE_MAX_DEFECTO = 10
VALE_IMPORTE_MAX_DEFECTO = Decimal("10.00")
VALE_DIAS_CADUCIDAD_DEFECTO = 365
VALE_VENTANA_DIAS = 90


def _espera_vale(args: Mapping[str, Any]) -> str:
    try:
        importe = dinero.eur(dinero.importe(args.get("importe")))
    except Exception:  # un importe ilegible no debe romper el aviso al cliente
        importe = "el importe indicado"
    return f"el vale de compensación de {importe} por el pedido {args.get('pedido')}"


HISTORIAL_VALES_SQL = """coalesce((SELECT jsonb_agg(jsonb_build_object(
             'numero', v.numero, 'pedido', v.pedido_id, 'importe', v.importe::text,
             'estado', v.estado, 'caduca', v.caduca, 'motivo', v.motivo, 'fecha', v.creado)
             ORDER BY v.creado DESC)
            FROM vales v WHERE v.cliente_id = %(cliente)s
             AND v.creado >= now() - make_interval(days => %(dias)s)), '[]')"""
INSTANTANEA_VALES_SQL = """
SELECT pedido_id AS pedido, linea, importe, estado FROM vales ORDER BY pedido_id, linea, importe
"""

VALE = OperacionConEfecto(
    nombre="vale",
    herramientas=("compensar_con_vale",),
    regla="vale",
    hechos=("pedido_existe", "estado_pedido", "importe_linea_vale", "vales_cliente_recientes",
            "compensaciones_linea_vale"),
    matriz=EnMatriz(singular="este vale", plural="vales de compensación",
                    limites={"encargado": Decimal("50.00"), "gerente": Decimal("300.00"), "regional": None}),
    # Un pasivo (lo que la tienda debe en vales vivos), no un movimiento de la pasarela.
    libro=EnLibro(tabla="vales", prefijo="VA", importe="importe", creado="creado"),
    titulo="Vale de compensación",
    decisiones=("approve", "edit", "reject"),
    campos=(
        Campo(nombre="pedido", etiqueta="Pedido"),
        Campo(nombre="linea", etiqueta="Línea del pedido"),
        Campo(nombre="importe", etiqueta="Importe del vale", dinero=True),
        Campo(nombre="motivo", etiqueta="Motivo del cliente"),
    ),
    campos_editables=("importe",),
    historial=EnHistorial(clave="vales", etiqueta="Vale", plural="vales",
                          detalle="{pedido} · {importe:euros} · caduca {caduca}", sql=HISTORIAL_VALES_SQL),
    texto_espera=_espera_vale,
    # «un vale», «compensáis», «no quiero devolverlo»: antes que «devolver» (lectura.py).
    offline=Offline(
        intencion="vale",
        patron=(r"\b(?:(?:un|el|mi|otro|del|algun|ese|este)\s+vales?\b|vales?\s+(?:de|por)\s+(?:compensacion|descuento|\d)"
                r"|compens\w*|no\s+(?:lo\s+|la\s+|los\s+|las\s+)?(?:quiero|voy\s+a|pienso)\s+devolver\w*)"),
        palabra="vale", clave_numero="vale"),
    instantanea=EnInstantanea(
        tablas={"vales": INSTANTANEA_VALES_SQL},
        numeros=(Numeracion(marcador="vale", prefijo="VA", sql="SELECT numero, id FROM vales"),),
    ),
)


# -- Reenvío de lo que no llegó o llegó roto (sql/017_reenvio.sql) ------------------------------

# Cómo lee el cliente el motivo (nunca la clave interna).
MOTIVOS_REENVIO = {"no_llego": "no ha llegado", "llego_roto": "llegó roto o inservible"}


def _espera_reenvio(args: Mapping[str, Any]) -> str:
    unidades = args.get("unidades") or 1
    que = "una unidad" if str(unidades) == "1" else f"{unidades} unidades"
    return f"el reenvío sin cargo de {que} de la línea {args.get('linea')} del pedido {args.get('pedido')}"


HISTORIAL_REENVIOS_SQL = """coalesce((SELECT jsonb_agg(jsonb_build_object(
             'numero', v.numero, 'pedido', v.pedido_id, 'producto', pr.nombre,
             'unidades', v.unidades, 'valor', v.valor::text, 'vez', v.vez,
             'motivo', CASE v.motivo WHEN 'no_llego' THEN 'no llegó' ELSE 'llegó roto' END,
             'fecha', v.creado)
             ORDER BY v.creado DESC)
            FROM reenvios v JOIN productos pr ON pr.sku = v.sku
            WHERE v.cliente_id = %(cliente)s
             AND v.creado >= now() - make_interval(days => %(dias)s)), '[]')"""

INSTANTANEA_REENVIOS_SQL = """
SELECT pedido_id AS pedido, linea, sku, unidades, motivo, valor::text AS valor, vez
FROM reenvios ORDER BY pedido_id, linea, vez
"""

REENVIO = OperacionConEfecto(
    nombre="reenvio",
    herramientas=("reenviar",),
    regla="reenvio",
    hechos=("pedido_existe", "estado_pedido", "entregado_en", "enviado_en", "dias_enviado", "linea_reenvio"),
    matriz=EnMatriz(singular="este reenvío", plural="reenvíos", limites=_LIMITES_POR_DEFECTO),
    # Sin pasarela: no se cobra ni se paga; las unidades quedan compensadas en el libro.
    libro=EnLibro(tabla="reenvios", prefijo="RV", importe="valor", creado="creado"),
    titulo="Reenvío sin cargo",
    decisiones=("approve", "reject"),
    campos=(
        Campo(nombre="pedido", etiqueta="Pedido"),
        Campo(nombre="linea", etiqueta="Línea del pedido"),
        Campo(nombre="unidades", etiqueta="Unidades a reenviar"),
        Campo(nombre="motivo", etiqueta="Motivo (no_llego: no llegó; llego_roto: llegó roto)"),
        Campo(nombre="descripcion", etiqueta="Lo que cuenta el cliente"),
    ),
    historial=EnHistorial(clave="reenvios", etiqueta="Reenvío", plural="reenvíos",
                          detalle="{pedido} · {producto} · {motivo}", sql=HISTORIAL_REENVIOS_SQL),
    texto_espera=_espera_reenvio,
    offline=Offline(
        intencion="reenvio",
        # «no me ha llegado», «reenviadme», «mandadme otro»; «llegó roto» a secas no (puede
        # ser una devolución o un vale): hace falta pedir otro.
        patron=(r"\b(?:reenvi\w*|no (?:me |nos )?(?:ha|han) llegado|no (?:me |nos )?(?:llego|llegaron)"
                r"|nunca (?:me |nos )?(?:llego|ha llegado)|(?:mand|envi|repon)\w* (?:me |nos )?"
                r"(?:otr[oa]s?|un[oa] nuev[oa]s?)\b)"),
        palabra="reenvío", clave_numero="reenvio"),
    instantanea=EnInstantanea(
        tablas={"reenvios": INSTANTANEA_REENVIOS_SQL},
        numeros=(Numeracion(marcador="reenvio", prefijo="RV", sql="SELECT numero, id FROM reenvios"),),
    ),
)

OPERACIONES: tuple[OperacionConEfecto, ...] = (REEMBOLSO, CAMBIO, CANCELACION, REENVIO, VALE, DIRECCION)


def por_regla(regla: str | None, operaciones: Iterable[OperacionConEfecto] = OPERACIONES) -> OperacionConEfecto | None:
    return next((op for op in operaciones if op.regla == regla), None)


def por_herramienta(
    herramienta: str | None, operaciones: Iterable[OperacionConEfecto] = OPERACIONES
) -> OperacionConEfecto | None:
    return next((op for op in operaciones if herramienta in op.herramientas), None)


# La forma de la vista ``efectos``: una fila por efecto, venga de la tabla que venga.
COLUMNAS_EFECTOS = ("tipo", "id", "numero", "thread_id", "tool_call_id", "pedido_id", "cliente_id",
                    "tienda", "importe", "aprobado_por", "creado")


def vista_efectos_sql(operaciones: Iterable[OperacionConEfecto] = OPERACIONES) -> str:
    """La sentencia que (re)crea la vista ``efectos`` con todas las ``operaciones``.

    Su salida para ``OPERACIONES`` es ``sql/015_efectos.sql`` (lo comprueba una prueba):
    una operación nueva la copia en su migración. Los nombres vienen validados de la
    declaración (identificadores), nunca de un usuario.
    """
    ramas = [
        f"SELECT '{op.nombre}'::text AS tipo, id::bigint, numero::text, thread_id::text, tool_call_id::text,\n"
        f"       pedido_id::text, cliente_id::text, tienda::text, {op.libro.importe}::numeric(12,2) AS importe,\n"
        f"       aprobado_por::text, {op.libro.creado}::timestamptz AS creado\nFROM {op.libro.tabla}"
        for op in operaciones
    ]
    if not ramas:
        raise ValueError("la vista efectos necesita al menos una operación")
    # Cada columna con su tipo: CREATE OR REPLACE la amplía con una tabla nueva sin borrarla.
    return "CREATE OR REPLACE VIEW efectos AS\n" + "\nUNION ALL\n".join(ramas) + ";\n"
