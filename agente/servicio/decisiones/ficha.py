"""Lo que el encargado necesita para decidir con conocimiento: la ficha de una aprobación.

La transcripción (mensajes del cliente y del agente, los retenidos marcados), lo que el
cliente ha pedido y recibido en los últimos 90 días (pedidos, cada operación con efecto
declarada en ``nucleo.operaciones`` —reembolsos, cambios— y devoluciones) y, de cada pedido de la aprobación, sus líneas con el nombre del producto
y lo que el libro de compensaciones (``libro_lineas``) dice que ya se le devolvió.
Solo lecturas; el dinero sale como texto (``dinero.texto``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from nucleo import dinero
from nucleo.operacion import OperacionConEfecto
from nucleo.operaciones import OPERACIONES, por_herramienta

__all__ = [
    "DIAS_HISTORIAL",
    "conversacion",
    "detalles_de",
    "productos_de",
    "estado_linea",
    "ficha",
    "historial_cliente",
    "historial_cliente_sql",
    "lineas_de",
]

DIAS_HISTORIAL = 90

# Con lo que escribió una persona de la tienda (la vista de sql/028), en su sitio por id.
SELECT_CONVERSACION_SQL = """
SELECT id, rol, texto, creado AS fecha, retenido, autor FROM transcripcion
WHERE thread_id = %(thread_id)s ORDER BY id
"""
PEDIDOS_SQL = """coalesce((SELECT jsonb_agg(jsonb_build_object(
             'id', p.id, 'fecha', p.fecha, 'estado', p.estado, 'importe', p.importe::text)
             ORDER BY p.fecha DESC)
            FROM pedidos p WHERE p.cliente_id = %(cliente)s
             AND p.fecha >= now() - make_interval(days => %(dias)s)), '[]')"""
DEVOLUCIONES_SQL = """coalesce((SELECT jsonb_agg(jsonb_build_object(
             'pedido', d.pedido_id, 'importe', d.importe::text, 'motivo', d.motivo,
             'fecha', d.creada)
             ORDER BY d.creada DESC)
            FROM devoluciones d WHERE d.cliente_id = %(cliente)s
             AND d.creada >= now() - make_interval(days => %(dias)s)), '[]')"""


def historial_cliente_sql(operaciones: Sequence[OperacionConEfecto] = OPERACIONES) -> str:
    """Un solo viaje: cada lista en su subconsulta, la más reciente primero; entre los
    pedidos y las devoluciones, la de cada operación declarada (``EnHistorial.sql``)."""
    listas = [("pedidos", PEDIDOS_SQL), *((op.historial.clave, op.historial.sql) for op in operaciones),
              ("devoluciones", DEVOLUCIONES_SQL)]
    return "SELECT\n  " + ",\n  ".join(f"{consulta} AS {clave}" for clave, consulta in listas)


SELECT_HISTORIAL_CLIENTE_SQL = historial_cliente_sql()
SELECT_LINEAS_SQL = """
SELECT l.pedido_id, l.linea, l.sku, pr.nombre AS producto, l.unidades, l.precio_unitario,
       l.pagado, l.reembolsado, l.unidades_reembolsadas, l.unidades_cambiadas,
       l.unidades_libres, l.reembolsable, p.estado AS estado_pedido, p.fecha, p.importe
FROM libro_lineas l
JOIN productos pr ON pr.sku = l.sku
JOIN pedidos p ON p.id = l.pedido_id
WHERE l.pedido_id = ANY(%(pedidos)s) AND p.cliente_id = %(cliente)s
ORDER BY l.pedido_id, l.linea
"""


def conversacion(conexion: psycopg.Connection, thread_id: str) -> list[dict[str, Any]]:
    return conexion.execute(SELECT_CONVERSACION_SQL, {"thread_id": thread_id}).fetchall()


def historial_cliente(
    conexion: psycopg.Connection,
    cliente_id: str,
    *,
    dias: int = DIAS_HISTORIAL,
    operaciones: Sequence[OperacionConEfecto] = OPERACIONES,
) -> dict[str, Any]:
    """Las listas de los últimos ``dias`` y, en ``tipos``, cómo enseña la tarjeta la de
    cada operación (``EnHistorial``: clave, etiqueta, plural y plantilla del detalle)."""
    fila = conexion.execute(
        historial_cliente_sql(operaciones), {"cliente": cliente_id, "dias": dias}).fetchone()
    return {"dias": dias, **{k: list(v) for k, v in fila.items()},
            "tipos": [op.historial.como_json() for op in operaciones]}


def estado_linea(linea: dict[str, Any]) -> str:
    """«sin compensar», «reembolsada», «cambiada», «en parte» (quedan unidades libres) o
    «cancelada» (la cancelación del pedido compensó todas sus unidades)."""
    reembolsadas, cambiadas = linea["unidades_reembolsadas"], linea["unidades_cambiadas"]
    if not reembolsadas and not cambiadas:
        # Sin libres y sin reembolso ni cambio: solo una cancelación las ocupa (sql/016).
        return "cancelada" if linea["unidades_libres"] == 0 else "sin compensar"
    if linea["unidades_libres"] > 0 or (reembolsadas and cambiadas):
        return "en parte"
    return "reembolsada" if reembolsadas else "cambiada"


def lineas_de(
    conexion: psycopg.Connection, pedidos: list[str], cliente_id: str
) -> dict[str, dict[str, Any]]:
    """Cada pedido (solo del cliente) con sus líneas y su estado en el libro."""
    resultado: dict[str, dict[str, Any]] = {}
    filas = conexion.execute(SELECT_LINEAS_SQL, {"pedidos": pedidos, "cliente": cliente_id})
    for f in filas.fetchall():
        pedido = resultado.setdefault(f["pedido_id"], {
            "id": f["pedido_id"], "estado": f["estado_pedido"], "fecha": f["fecha"],
            "importe": dinero.texto(f["importe"]), "lineas": [],
        })
        pedido["lineas"].append({
            "linea": f["linea"], "sku": f["sku"], "producto": f["producto"],
            "unidades": f["unidades"], "precio_unitario": dinero.texto(f["precio_unitario"]),
            "pagado": dinero.texto(f["pagado"]), "reembolsado": dinero.texto(f["reembolsado"]),
            "unidades_reembolsadas": f["unidades_reembolsadas"],
            "unidades_cambiadas": f["unidades_cambiadas"], "unidades_libres": f["unidades_libres"],
            "reembolsable": dinero.texto(f["reembolsable"]), "estado": estado_linea(f),
        })
    return resultado


def detalles_de(
    conexion: psycopg.Connection,
    acciones: Sequence[dict[str, Any]],
    cliente_id: str,
    *,
    operaciones: Sequence[OperacionConEfecto] = OPERACIONES,
) -> list[list[dict[str, Any]]]:
    """Por cada acción, lo que su operación declara en ``EnTarjeta`` (nombres, precios,
    direcciones...): ``[{"etiqueta", "valor", "dinero"}]``; vacío si no declara nada o si
    los argumentos no casan con un pedido del cliente."""
    resultado: list[list[dict[str, Any]]] = []
    for accion in acciones:
        op = por_herramienta(accion.get("name"), operaciones)
        args = accion.get("args")
        if op is None or op.tarjeta is None or not isinstance(args, dict):
            resultado.append([])
            continue
        fila = conexion.execute(op.tarjeta.sql, {"args": Jsonb(args), "cliente": cliente_id}).fetchone()
        resultado.append([] if fila is None else [
            {"etiqueta": etiqueta, "dinero": etiqueta in op.tarjeta.dinero,
             "valor": None if valor is None else (
                 dinero.texto(valor) if etiqueta in op.tarjeta.dinero else str(valor))}
            for etiqueta, valor in fila.items()
        ])
    return resultado


SELECT_NOMBRES_PRODUCTO_SQL = "SELECT sku, nombre FROM productos WHERE sku = ANY(%(skus)s)"


def productos_de(conexion: psycopg.Connection, acciones: Sequence[dict[str, Any]]) -> dict[str, str]:
    """SKU -> nombre de los productos que nombran las acciones (el personal no lee «CAF-001»)."""
    skus = sorted({str(v).strip().upper() for a in acciones if isinstance(a.get("args"), dict)
                   for k, v in a["args"].items() if k.startswith("sku") and isinstance(v, str)})
    if not skus:
        return {}
    return {f["sku"]: f["nombre"] for f in conexion.execute(SELECT_NOMBRES_PRODUCTO_SQL, {"skus": skus}).fetchall()}


def ficha(conexion: psycopg.Connection, fila: dict[str, Any]) -> dict[str, Any]:
    """La fila de la bandeja con ``conversacion``, ``historial_cliente``, ``pedidos`` y
    ``detalles`` (uno por acción)."""
    acciones = (fila.get("peticion") or {}).get("action_requests") or []
    pedidos = sorted({str(a["args"]["pedido"]) for a in acciones
                      if isinstance(a.get("args"), dict) and a["args"].get("pedido")})
    return {
        **fila,
        "conversacion": conversacion(conexion, fila["thread_id"]),
        "historial_cliente": historial_cliente(conexion, fila["cliente_id"]),
        "pedidos": lineas_de(conexion, pedidos, fila["cliente_id"]),
        "detalles": detalles_de(conexion, acciones, fila["cliente_id"]),
        "productos": productos_de(conexion, acciones),
    }
