"""Consultas de solo lectura: el pedido y las alternativas en stock.

Todas reciben el cliente (``ContextoCliente``) aparte de los argumentos del modelo: un
pedido de otro cliente se contesta igual que uno que no existe. También viven aquí los
ayudantes de claves que comparten reembolsos y sustituciones. La política de la tienda
(``consultar_politica``) vive en ``politicas/`` y llega por ``Dependencias.politica``.
"""

from __future__ import annotations

from psycopg_pool import ConnectionPool

from nucleo import dinero
from nucleo.abonos import MEDIOS_PAGO, PLAZO_ABONO_DEFECTO, texto_plazo
from nucleo.contexto import ContextoCliente
from nucleo.errores import PedidoNoEncontrado, ProductoNoEncontrado

RESPUESTA_ENCARGADO_EN_ESPERA = (
    "Consulta enviada al encargado de la tienda. Su respuesta llegará como resultado de "
    "esta herramienta; mientras tanto, di al cliente que estás esperando al encargado."
)


# --- Ayudantes compartidos -------------------------------------------------------------

def normalizar_id(valor: str) -> str:
    """Pedidos y SKU se guardan en mayúsculas; el modelo o el cliente no siempre."""
    return (valor or "").strip().upper()


# --- consultar_pedido ------------------------------------------------------------------

SELECT_PEDIDO_SQL = """
SELECT p.id, p.tienda, p.estado, p.fecha, p.entregado_en, p.importe,
       CASE WHEN p.entregado_en IS NULL THEN NULL
            ELSE floor(extract(epoch FROM now() - p.entregado_en) / 86400)::int
       END AS dias_desde_entrega,
       COALESCE((SELECT sum(r.importe) FROM reembolsos r WHERE r.pedido_id = p.id), 0)
           AS reembolsado,
       p.metodo_pago,
       CASE p.metodo_pago
            WHEN 'bizum' THEN coalesce(pt.plazo_abono_bizum_dias, %(plazo_bizum)s)
            WHEN 'transferencia' THEN coalesce(pt.plazo_abono_transferencia_dias, %(plazo_transferencia)s)
            ELSE coalesce(pt.plazo_abono_tarjeta_dias, %(plazo_tarjeta)s)
       END AS plazo_abono_dias,
       EXISTS (SELECT 1 FROM reservas_pendientes rp
               WHERE rp.pedido_id = p.id AND rp.herramienta IN ('reembolsar', 'cancelar_pedido'))
           AS reembolso_en_firma
FROM pedidos p
LEFT JOIN politicas_tienda pt ON pt.tienda = p.tienda
WHERE p.id = %(pedido)s AND p.cliente_id = %(cliente_id)s
"""

# Los reembolsos del pedido (de una devolución, una cancelación o la diferencia de un
# cambio), el último al final: «¿cuándo me llega el dinero?» pregunta por ellos.
SELECT_REEMBOLSOS_SQL = """
SELECT r.numero, r.importe, r.estado, r.creado, r.emitido_en
FROM reembolsos r
WHERE r.pedido_id = %(pedido)s
ORDER BY r.creado, r.id
"""
# Los DEFAULT de politicas_tienda.plazo_abono_<medio>_dias (herramientas/ no importa politicas/).
_PLAZOS_DEFECTO = {f"plazo_{medio}": dias for medio, dias in PLAZO_ABONO_DEFECTO.items()}

# Las cifras de cada línea salen del libro (vista libro_lineas): la misma definición de
# «reembolsable» que usan reembolsar y sustituir.
SELECT_LINEAS_SQL = """
SELECT l.linea, l.sku, pr.nombre, pr.categoria, l.unidades, l.precio_unitario, l.pagado,
       l.reembolsado, l.unidades_reembolsadas, l.unidades_cambiadas, l.unidades_libres,
       l.reembolsable
FROM libro_lineas l
JOIN productos pr ON pr.sku = l.sku
WHERE l.pedido_id = %(pedido)s
ORDER BY l.linea
"""


def consultar_pedido(pool: ConnectionPool, *, contexto: ContextoCliente, pedido: str) -> dict:
    """Estado, fechas, líneas e importes de un pedido del cliente, con su libro de compensaciones.

    ``reembolsado`` suma todos los reembolsos del pedido (también los pendientes de la
    pasarela y las diferencias devueltas por un cambio): lo comprometido no vuelve a
    salir. ``reembolsable`` (del pedido y de cada línea) es el precio de las unidades
    que nadie ha reembolsado ni cambiado: una unidad reembolsada en parte ya no cuenta.
    """
    pedido = normalizar_id(pedido)
    with pool.connection() as conexion:
        fila = conexion.execute(
            SELECT_PEDIDO_SQL, {"pedido": pedido, "cliente_id": contexto.cliente_id, **_PLAZOS_DEFECTO}
        ).fetchone()
        if fila is None:
            raise PedidoNoEncontrado(pedido)
        lineas = conexion.execute(SELECT_LINEAS_SQL, {"pedido": pedido}).fetchall()
        reembolsos = conexion.execute(SELECT_REEMBOLSOS_SQL, {"pedido": pedido}).fetchall()
    return {
        "pedido": fila["id"],
        "estado": fila["estado"],
        "fecha": fila["fecha"].date().isoformat(),
        "entregado_en": fila["entregado_en"].date().isoformat() if fila["entregado_en"] else None,
        "dias_desde_entrega": fila["dias_desde_entrega"],
        "importe": dinero.texto(fila["importe"]),
        "reembolsado": dinero.texto(fila["reembolsado"]),
        "reembolsable": dinero.texto(dinero.sumar(linea["reembolsable"] for linea in lineas)),
        # Cuándo llega el dinero: vuelve al medio de pago del pedido y tarda lo que la tienda
        # dice que suele tardar ese medio (su política); ``reembolso_en_firma``: hay uno que
        # espera la firma de un encargado y aún no ha salido nada.
        "metodo_pago": fila["metodo_pago"],
        "abono": {
            "medio": MEDIOS_PAGO.get(fila["metodo_pago"], fila["metodo_pago"]),
            "plazo_dias_habiles": fila["plazo_abono_dias"],
            "plazo": texto_plazo(fila["plazo_abono_dias"]),
            "reembolso_en_firma": fila["reembolso_en_firma"],
        },
        "reembolsos": [
            {
                "numero": r["numero"],
                "importe": dinero.texto(r["importe"]),
                "estado": r["estado"],
                "fecha": r["creado"].date().isoformat(),
                "emitido_en": r["emitido_en"].date().isoformat() if r["emitido_en"] else None,
            }
            for r in reembolsos
        ],
        "lineas": [
            {
                "linea": linea["linea"],
                "sku": linea["sku"],
                "nombre": linea["nombre"],
                "categoria": linea["categoria"],
                "unidades": linea["unidades"],
                "precio_unitario": dinero.texto(linea["precio_unitario"]),
                "importe": dinero.texto(linea["pagado"]),
                "reembolsado": dinero.texto(linea["reembolsado"]),
                "unidades_reembolsadas": linea["unidades_reembolsadas"],
                "unidades_cambiadas": linea["unidades_cambiadas"],
                "unidades_libres": linea["unidades_libres"],
                "reembolsable": dinero.texto(linea["reembolsable"]),
            }
            for linea in lineas
        ],
    }


# --- stock_alternativas ----------------------------------------------------------------

# Los precios son los de la tienda que vende (sql/030), nunca los de otra; sin precio allí,
# la tienda no vende el producto: pvp NULL y ninguna alternativa.
SELECT_PRODUCTO_SQL = """
SELECT p.sku, p.nombre, p.categoria, pt.pvp
FROM productos p LEFT JOIN precios_tienda pt ON pt.tienda = %(tienda)s AND pt.sku = p.sku
WHERE p.sku = %(sku)s
"""

SELECT_ALTERNATIVAS_SQL = """
SELECT p.sku, p.nombre, pp.pvp, pp.pvp - po.pvp AS diferencia, s.unidades
FROM productos o
JOIN precios_tienda po ON po.tienda = %(tienda)s AND po.sku = o.sku
JOIN productos p ON p.categoria = o.categoria AND p.sku <> o.sku
JOIN precios_tienda pp ON pp.tienda = %(tienda)s AND pp.sku = p.sku
JOIN stock s ON s.sku = p.sku AND s.tienda = %(tienda)s
WHERE o.sku = %(sku)s AND s.unidades > 0
ORDER BY diferencia, p.sku
"""


def stock_alternativas(pool: ConnectionPool, *, contexto: ContextoCliente, sku: str) -> dict:
    """Productos de la misma categoría con stock en la tienda del cliente, por diferencia.

    Precios y diferencia, los de la tienda del cliente: es la de sus pedidos (la ingesta no
    admite un pedido con un cliente de otra tienda) y la que liquida el cambio."""
    sku = normalizar_id(sku)
    with pool.connection() as conexion:
        producto = conexion.execute(SELECT_PRODUCTO_SQL, {"sku": sku, "tienda": contexto.tienda}).fetchone()
        if producto is None:
            raise ProductoNoEncontrado(sku)
        filas = conexion.execute(
            SELECT_ALTERNATIVAS_SQL, {"sku": sku, "tienda": contexto.tienda}
        ).fetchall()
    return {
        "sku": producto["sku"],
        "nombre": producto["nombre"],
        "categoria": producto["categoria"],
        "pvp": dinero.texto(producto["pvp"]) if producto["pvp"] is not None else None,
        "alternativas": [
            {
                "sku": fila["sku"],
                "nombre": fila["nombre"],
                "pvp": dinero.texto(fila["pvp"]),
                "diferencia": dinero.texto(fila["diferencia"]),
                "unidades": fila["unidades"],
            }
            for fila in filas
        ],
    }


# --- consultar_encargado ---------------------------------------------------------------


def consultar_encargado(pregunta: str) -> str:
    """Solo se ejecuta si nadie la intercepta: la respuesta real llega por la firma (respond)."""
    return RESPUESTA_ENCARGADO_EN_ESPERA
