"""Consultas de solo lectura: el pedido, la política de la tienda, alternativas en stock.

Todas reciben el cliente (``ContextoCliente``) aparte de los argumentos del modelo: un
pedido de otro cliente se contesta igual que uno que no existe. También viven aquí los
ayudantes de dinero y de claves que comparten reembolsos y sustituciones.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from psycopg_pool import ConnectionPool

from agente.nucleo import dinero
from agente.nucleo.contexto import ContextoCliente
from agente.nucleo.errores import (
    ContextoAusente,
    ImporteNoValido,
    PedidoNoEncontrado,
    ProductoNoEncontrado,
)

CENTIMO = Decimal("0.01")

RESPUESTA_ENCARGADO_EN_ESPERA = (
    "Consulta enviada al encargado de la tienda. Su respuesta llegará como resultado de "
    "esta herramienta; mientras tanto, di al cliente que estás esperando al encargado."
)


# --- Ayudantes compartidos -------------------------------------------------------------


def texto_dinero(importe: Decimal) -> str:
    """Dinero en JSON: texto con dos decimales y punto ("120.00")."""
    return f"{importe.quantize(CENTIMO):.2f}"


def formato_eur(importe: Decimal) -> str:
    """Dinero para leer en español: "1.234,50 EUR"."""
    texto = f"{importe.quantize(CENTIMO):,.2f}"
    return texto.replace(",", "_").replace(".", ",").replace("_", ".") + " EUR"


def importe_decimal(valor: Any) -> Decimal:
    """Un importe en euros como Decimal de céntimos; ``ImporteNoValido`` si no lo es."""
    try:
        importe = valor if isinstance(valor, Decimal) else Decimal(str(valor).strip())
    except (InvalidOperation, ValueError) as exc:
        raise ImporteNoValido(f"el importe «{valor}» no es un número válido") from exc
    if not importe.is_finite():
        raise ImporteNoValido(f"el importe «{valor}» no es un número válido")
    if importe != importe.quantize(CENTIMO):
        raise ImporteNoValido(f"el importe {valor} tiene más de dos decimales")
    return importe.quantize(CENTIMO)


def normalizar_id(valor: str) -> str:
    """Pedidos y SKU se guardan en mayúsculas; el modelo o el cliente no siempre."""
    return (valor or "").strip().upper()


def clave_idempotencia(thread_id: str | None, tool_call_id: str | None) -> str:
    """La clave de un efecto: (hilo, llamada). Sin cualquiera de los dos no hay garantía."""
    if not tool_call_id:
        raise ContextoAusente(
            "falta el identificador de la llamada (tool_call_id): sin él no se puede "
            "garantizar que la operación no se ejecute dos veces"
        )
    if not thread_id:
        raise ContextoAusente(
            "falta el identificador del hilo (thread_id): sin él no se puede garantizar "
            "que la operación no se ejecute dos veces"
        )
    return f"{thread_id}:{tool_call_id}"


# --- consultar_pedido ------------------------------------------------------------------

SELECT_PEDIDO_SQL = """
SELECT p.id, p.tienda, p.estado, p.fecha, p.entregado_en, p.importe,
       CASE WHEN p.entregado_en IS NULL THEN NULL
            ELSE floor(extract(epoch FROM now() - p.entregado_en) / 86400)::int
       END AS dias_desde_entrega,
       COALESCE((SELECT sum(r.importe) FROM reembolsos r WHERE r.pedido_id = p.id), 0)
           AS reembolsado
FROM pedidos p
WHERE p.id = %(pedido)s AND p.cliente_id = %(cliente_id)s
"""

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
            SELECT_PEDIDO_SQL, {"pedido": pedido, "cliente_id": contexto.cliente_id}
        ).fetchone()
        if fila is None:
            raise PedidoNoEncontrado(pedido)
        lineas = conexion.execute(SELECT_LINEAS_SQL, {"pedido": pedido}).fetchall()
    return {
        "pedido": fila["id"],
        "estado": fila["estado"],
        "fecha": fila["fecha"].date().isoformat(),
        "entregado_en": fila["entregado_en"].date().isoformat() if fila["entregado_en"] else None,
        "dias_desde_entrega": fila["dias_desde_entrega"],
        "importe": dinero.texto(fila["importe"]),
        "reembolsado": dinero.texto(fila["reembolsado"]),
        "reembolsable": dinero.texto(dinero.sumar(linea["reembolsable"] for linea in lineas)),
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


# --- consultar_politica ----------------------------------------------------------------

# Los mismos valores que los DEFAULT de politicas_tienda (sql/002_politica.sql).
POLITICA_POR_DEFECTO = {
    "limite_reembolso": Decimal("60.00"),
    "devoluciones_max_30d": 2,
    "ventana_devoluciones_dias": 30,
    "dias_desde_entrega": 30,
    "diferencia_max_sustitucion": Decimal("0.00"),
    "horas_caducidad": 72,
}

SELECT_POLITICA_SQL = """
SELECT t.nombre,
       COALESCE(pt.limite_reembolso, %(limite_reembolso)s) AS limite_reembolso,
       COALESCE(pt.devoluciones_max_30d, %(devoluciones_max_30d)s) AS devoluciones_max_30d,
       COALESCE(pt.ventana_devoluciones_dias, %(ventana_devoluciones_dias)s)
           AS ventana_devoluciones_dias,
       COALESCE(pt.dias_desde_entrega, %(dias_desde_entrega)s) AS dias_desde_entrega,
       COALESCE(pt.diferencia_max_sustitucion, %(diferencia_max_sustitucion)s)
           AS diferencia_max_sustitucion,
       COALESCE(pt.horas_caducidad, %(horas_caducidad)s) AS horas_caducidad
FROM tiendas t
LEFT JOIN politicas_tienda pt ON pt.tienda = t.id
WHERE t.id = %(tienda)s
"""


def texto_politica(nombre_tienda: str, reglas: dict[str, Any]) -> str:
    diferencia = Decimal(reglas["diferencia_max_sustitucion"])
    if diferencia > 0:
        regla_cambio = (
            f"si el nuevo cuesta más de {formato_eur(diferencia)} por encima del original, "
            "el cambio necesita la aprobación de un encargado"
        )
    else:
        regla_cambio = "si el nuevo es más caro que el original, el cambio necesita la aprobación de un encargado"
    return "\n".join(
        [
            f"Política de devoluciones y cambios de la tienda {nombre_tienda}:",
            "- Reembolsos: se devuelve al medio de pago original y nunca más de lo pagado por "
            "el pedido menos lo ya reembolsado. Un reembolso de hasta "
            f"{formato_eur(Decimal(reglas['limite_reembolso']))} se hace al momento; si es "
            "mayor, necesita la aprobación de un encargado de la tienda.",
            f"- Plazo: si han pasado más de {reglas['dias_desde_entrega']} días desde la entrega, "
            "la devolución necesita la aprobación de un encargado.",
            f"- Devoluciones frecuentes: si el cliente ya tiene {reglas['devoluciones_max_30d']} "
            f"devoluciones o más en los últimos {reglas['ventana_devoluciones_dias']} días, una "
            "nueva necesita la aprobación de un encargado.",
            "- Cambios: un producto del pedido se puede cambiar por otro de la misma categoría "
            f"con stock en la tienda; {regla_cambio}.",
            "- Aprobaciones: una operación que espera a un encargado caduca a las "
            f"{reglas['horas_caducidad']} horas. Si mientras tanto cambian el stock o el precio, "
            "hay que volver a proponerla.",
        ]
    )


def consultar_politica(pool: ConnectionPool, *, contexto: ContextoCliente) -> str:
    """La política de la tienda del cliente en texto llano (valores por defecto si no hay fila)."""
    with pool.connection() as conexion:
        fila = conexion.execute(
            SELECT_POLITICA_SQL, {**POLITICA_POR_DEFECTO, "tienda": contexto.tienda}
        ).fetchone()
    if fila is None:
        nombre, reglas = contexto.tienda, POLITICA_POR_DEFECTO
    else:
        nombre, reglas = fila["nombre"], fila
    return texto_politica(nombre, reglas)


# --- stock_alternativas ----------------------------------------------------------------

SELECT_PRODUCTO_SQL = """
SELECT sku, nombre, categoria, pvp FROM productos WHERE sku = %(sku)s
"""

SELECT_ALTERNATIVAS_SQL = """
SELECT p.sku, p.nombre, p.pvp, p.pvp - o.pvp AS diferencia, s.unidades
FROM productos o
JOIN productos p ON p.categoria = o.categoria AND p.sku <> o.sku
JOIN stock s ON s.sku = p.sku AND s.tienda = %(tienda)s
WHERE o.sku = %(sku)s AND s.unidades > 0
ORDER BY diferencia, p.sku
"""


def stock_alternativas(pool: ConnectionPool, *, contexto: ContextoCliente, sku: str) -> dict:
    """Productos de la misma categoría con stock en la tienda del cliente, por diferencia."""
    sku = normalizar_id(sku)
    with pool.connection() as conexion:
        producto = conexion.execute(SELECT_PRODUCTO_SQL, {"sku": sku}).fetchone()
        if producto is None:
            raise ProductoNoEncontrado(sku)
        filas = conexion.execute(
            SELECT_ALTERNATIVAS_SQL, {"sku": sku, "tienda": contexto.tienda}
        ).fetchall()
    return {
        "sku": producto["sku"],
        "nombre": producto["nombre"],
        "categoria": producto["categoria"],
        "pvp": texto_dinero(producto["pvp"]),
        "alternativas": [
            {
                "sku": fila["sku"],
                "nombre": fila["nombre"],
                "pvp": texto_dinero(fila["pvp"]),
                "diferencia": texto_dinero(fila["diferencia"]),
                "unidades": fila["unidades"],
            }
            for fila in filas
        ],
    }


# --- consultar_encargado ---------------------------------------------------------------


def consultar_encargado(pregunta: str) -> str:
    """Solo se ejecuta si nadie la intercepta: la respuesta real llega por la firma (respond)."""
    return RESPUESTA_ENCARGADO_EN_ESPERA
