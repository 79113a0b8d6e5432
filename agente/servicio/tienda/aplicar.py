"""Aplicar un registro de la tienda: upsert por su id propio, idempotente por huella, y lo
que rompería los libros se rechaza (409) antes de escribir nada.

Cada función corre dentro de la transacción (o del punto de guardado) de quien la llama:
un registro se aplica entero o no se aplica. Una versión nueva (cuerpo con otra huella)
deja su fila en ``ingesta_versiones`` con el cuerpo y la marca de tiempo.

Un pedido que ya existe se bloquea antes de nada, como en las operaciones del chat: las dos
se turnan en su fila y lo que decide un 409 se lee después del candado.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

import psycopg
from pydantic import BaseModel

from agente.servicio.tienda.registros import (
    CambioEstado,
    DatosCliente,
    DatosPedido,
    DatosProducto,
    DatosStock,
    coherencia,
    huella,
)
from nucleo.direcciones import provincia_de
from nucleo.errores import PedidoNoEncontrado, RegistroRechazado

__all__ = [
    "Aplicado",
    "aplicar_cliente",
    "aplicar_estado",
    "aplicar_pedido",
    "aplicar_producto",
    "aplicar_stock",
]

VERSION_SQL = """
SELECT version, huella FROM ingesta_registros
WHERE tipo = %(tipo)s AND tienda = %(tienda)s AND id = %(id)s FOR UPDATE
"""
# La versión nueva y su cuerpo, en una sentencia. Si otra petición con el mismo cuerpo se
# adelantó (las dos vieron que no había nada), no hay versión nueva: ninguna fila.
NUEVA_VERSION_SQL = """
WITH r AS (
    INSERT INTO ingesta_registros (tipo, tienda, id, version, huella)
    VALUES (%(tipo)s, %(tienda)s, %(id)s, 1, %(huella)s)
    ON CONFLICT (tipo, tienda, id) DO UPDATE
    SET version = ingesta_registros.version + 1, huella = EXCLUDED.huella, actualizado = now()
    WHERE ingesta_registros.huella <> EXCLUDED.huella
    RETURNING version
)
INSERT INTO ingesta_versiones (tipo, tienda, id, version, huella, datos, clave)
SELECT %(tipo)s, %(tienda)s, %(id)s, r.version, %(huella)s, %(datos)s::jsonb, %(clave)s FROM r
RETURNING version
"""
UPSERT_CLIENTE_SQL = """
INSERT INTO clientes (id, tienda, nombre, email, telefono, calle, codigo_postal, localidad, provincia)
VALUES (%(id)s, %(tienda)s, %(nombre)s, %(email)s, %(telefono)s, %(calle)s, %(codigo_postal)s,
        %(localidad)s, %(provincia)s)
ON CONFLICT (id) DO UPDATE SET nombre = EXCLUDED.nombre, email = EXCLUDED.email,
    telefono = EXCLUDED.telefono, calle = EXCLUDED.calle, codigo_postal = EXCLUDED.codigo_postal,
    localidad = EXCLUDED.localidad, provincia = EXCLUDED.provincia
WHERE clientes.tienda = EXCLUDED.tienda
RETURNING id
"""
# El catálogo (nombre, categoría) es común; el pvp es el de la tienda de la clave y solo
# cambia su fila de precios_tienda. pvp_referencia se pone al dar de alta y no se toca más:
# ninguna tienda cambia lo que cobra o devuelve otra (sql/030).
UPSERT_PRODUCTO_SQL = """
WITH producto AS (
    INSERT INTO productos (sku, nombre, categoria, pvp_referencia)
    VALUES (%(id)s, %(nombre)s, %(categoria)s, %(pvp)s)
    ON CONFLICT (sku) DO UPDATE SET nombre = EXCLUDED.nombre, categoria = EXCLUDED.categoria
    RETURNING sku
)
INSERT INTO precios_tienda (tienda, sku, pvp) SELECT %(tienda)s, sku, %(pvp)s FROM producto
ON CONFLICT (tienda, sku) DO UPDATE SET pvp = EXCLUDED.pvp
"""
UPSERT_STOCK_SQL = """
INSERT INTO stock (sku, tienda, unidades) SELECT %(id)s, %(tienda)s, %(unidades)s
WHERE EXISTS (SELECT 1 FROM productos WHERE sku = %(id)s)
ON CONFLICT (tienda, sku) DO UPDATE SET unidades = EXCLUDED.unidades
RETURNING sku
"""
# El pedido, bloqueado si existe: la ingesta y las operaciones del chat
# (``caja.libro.bloquear_pedido``) se esperan en esta fila. Solo la fila: tras esperar
# al candado se relee ella, pero una subconsulta o un JOIN seguirían con la foto de antes
# (docs/trampas.md) y no verían la cancelación o el reembolso que el chat acaba de confirmar.
BLOQUEAR_PEDIDO_SQL = """
SELECT tienda, estado, cliente_id, fecha, enviado_en, entregado_en FROM pedidos
WHERE id = %(id)s FOR UPDATE
"""
# Lo que los libros ya tienen del pedido y su última versión, en la sentencia siguiente al
# candado (foto nueva): de aquí salen los 409.
HECHOS_PEDIDO_SQL = """
SELECT EXISTS (SELECT 1 FROM efectos e WHERE e.pedido_id = p.id) AS con_efectos,
       EXISTS (SELECT 1 FROM cancelaciones c WHERE c.pedido_id = p.id) AS cancelado_por_chat,
       r.version, r.huella
FROM pedidos p
LEFT JOIN ingesta_registros r ON r.tipo = 'pedido' AND r.tienda = p.tienda AND r.id = p.id
WHERE p.id = %(id)s
"""
# Por línea: la unidad más alta ocupada en el libro (o 0 si solo tiene un vale).
COMPENSADAS_SQL = """
SELECT l.linea, l.sku, l.unidades, l.precio_unitario, coalesce(max(c.unidad), 0) AS ocupadas
FROM lineas_pedido l
LEFT JOIN compensaciones_unidad c ON c.pedido_id = l.pedido_id AND c.linea = l.linea
WHERE l.pedido_id = %(id)s
  AND (c.pedido_id IS NOT NULL
       OR EXISTS (SELECT 1 FROM vales v WHERE v.pedido_id = l.pedido_id AND v.linea = l.linea))
GROUP BY l.linea, l.sku, l.unidades, l.precio_unitario
"""
UPSERT_PEDIDO_SQL = """
INSERT INTO pedidos (id, cliente_id, tienda, fecha, estado, enviado_en, entregado_en, importe,
                     calle, codigo_postal, localidad, provincia, referencia_pago, metodo_pago)
SELECT %(id)s, %(cliente_id)s, %(tienda)s, %(fecha)s, %(estado)s, %(enviado_en)s, %(entregado_en)s,
       %(importe)s, %(calle)s, %(codigo_postal)s, %(localidad)s, %(provincia)s, %(referencia_pago)s,
       coalesce(%(metodo_pago)s, 'tarjeta')
WHERE EXISTS (SELECT 1 FROM clientes WHERE id = %(cliente_id)s AND tienda = %(tienda)s)
ON CONFLICT (id) DO UPDATE SET cliente_id = EXCLUDED.cliente_id, fecha = EXCLUDED.fecha,
    estado = EXCLUDED.estado, enviado_en = EXCLUDED.enviado_en, entregado_en = EXCLUDED.entregado_en,
    importe = EXCLUDED.importe, calle = EXCLUDED.calle, codigo_postal = EXCLUDED.codigo_postal,
    localidad = EXCLUDED.localidad, provincia = EXCLUDED.provincia,
    referencia_pago = EXCLUDED.referencia_pago, metodo_pago = EXCLUDED.metodo_pago
WHERE pedidos.tienda = EXCLUDED.tienda AND %(actualizar)s
RETURNING id
"""
BORRAR_LINEAS_SQL = "DELETE FROM lineas_pedido WHERE pedido_id = %(id)s AND linea <> ALL(%(lineas)s)"
UPSERT_LINEAS_SQL = """
INSERT INTO lineas_pedido (pedido_id, linea, sku, unidades, precio_unitario)
SELECT %(id)s, l, s, u, p
FROM unnest(%(lineas)s::int[], %(skus)s::text[], %(unidades)s::int[], %(precios)s::numeric[]) AS t(l, s, u, p)
ON CONFLICT (pedido_id, linea) DO UPDATE
SET sku = EXCLUDED.sku, unidades = EXCLUDED.unidades, precio_unitario = EXCLUDED.precio_unitario
WHERE (lineas_pedido.sku, lineas_pedido.unidades, lineas_pedido.precio_unitario)
      IS DISTINCT FROM (EXCLUDED.sku, EXCLUDED.unidades, EXCLUDED.precio_unitario)
"""
# Lo que el pedido nombra y tiene que existir antes: su cliente (en esta tienda) y sus productos.
REFERENCIAS_SQL = """
SELECT EXISTS (SELECT 1 FROM clientes WHERE id = %(cliente_id)s AND tienda = %(tienda)s) AS cliente,
       array(SELECT s FROM unnest(%(skus)s::text[]) AS s
             WHERE NOT EXISTS (SELECT 1 FROM productos WHERE sku = s)) AS faltan
"""
# Un cambio de estado, solo si cambia algo: la fecha del estado nuevo y la coherencia de las demás.
ESTADO_SQL = """
UPDATE pedidos SET estado = %(estado)s,
    enviado_en = CASE %(estado)s
        WHEN 'pendiente' THEN NULL
        WHEN 'enviado' THEN %(fecha)s
        WHEN 'entregado' THEN least(coalesce(enviado_en, %(fecha)s), %(fecha)s)
        ELSE enviado_en END,
    entregado_en = CASE WHEN %(estado)s = 'entregado' THEN %(fecha)s END
WHERE id = %(id)s
"""


@dataclass(frozen=True)
class Aplicado:
    """Lo que pasó con un registro: ``creado``, ``actualizado`` o ``sin_cambios``."""

    tipo: str
    id: str
    resultado: str
    version: int

    def como_dict(self) -> dict:
        return {"tipo": self.tipo, "id": self.id, "resultado": self.resultado, "version": self.version}


def _rechazo(campo: str, motivo: str) -> RegistroRechazado:
    return RegistroRechazado(f"{campo}: {motivo}", campo=campo)


def _version_previa(cur: psycopg.Cursor, tipo: str, tienda: str, id_: str) -> tuple[int, str] | None:
    fila = cur.execute(VERSION_SQL, {"tipo": tipo, "tienda": tienda, "id": id_}).fetchone()
    return None if fila is None else (fila["version"], fila["huella"])


def _nueva_version(cur, tipo: str, tienda: str, id_: str, hash_: str, datos: str,
                   clave: str | None) -> int | None:
    """El número de la versión nueva, o ``None`` si la última ya tenía esta huella."""
    fila = cur.execute(NUEVA_VERSION_SQL, {"tipo": tipo, "tienda": tienda, "id": id_, "huella": hash_,
                                           "datos": datos, "clave": clave}).fetchone()
    return None if fila is None else fila["version"]


def _aplicar(cur, tipo: str, tienda: str, id_: str, datos: BaseModel, clave: str | None, escribir) -> Aplicado:
    """El esqueleto común: la misma huella no cambia nada; si no, ``escribir`` y versión nueva."""
    hash_, cuerpo = huella(datos)
    previa = _version_previa(cur, tipo, tienda, id_)
    if previa is not None and previa[1] == hash_:
        return Aplicado(tipo, id_, "sin_cambios", previa[0])
    escribir()
    version = _nueva_version(cur, tipo, tienda, id_, hash_, cuerpo, clave)
    return _hecho(cur, tipo, tienda, id_, "creado" if previa is None else "actualizado", version)


def _hecho(cur, tipo: str, tienda: str, id_: str, resultado: str, version: int | None,
           como: str | None = None) -> Aplicado:
    if version is None:  # otra petición igual se adelantó: esta no cambió nada
        previa = _version_previa(cur, tipo, tienda, id_)
        return Aplicado(como or tipo, id_, "sin_cambios", previa[0] if previa else 0)
    if resultado == "creado" and version > 1:  # otra petición lo creó entre medias
        resultado = "actualizado"
    return Aplicado(como or tipo, id_, resultado, version)


def _direccion(d) -> dict:
    if d is None:
        return {"calle": None, "codigo_postal": None, "localidad": None, "provincia": None}
    return {"calle": d.calle, "codigo_postal": d.codigo_postal, "localidad": d.localidad,
            "provincia": provincia_de(d.codigo_postal)}


def aplicar_cliente(cur, tienda: str, id_: str, datos: DatosCliente, clave: str | None = None) -> Aplicado:
    def escribir():
        fila = cur.execute(UPSERT_CLIENTE_SQL, {"id": id_, "tienda": tienda, "nombre": datos.nombre,
                                                "email": datos.email, "telefono": datos.telefono,
                                                **_direccion(datos.direccion)}).fetchone()
        if fila is None:
            raise _rechazo("id", f"el cliente {id_} es de otra tienda")

    return _aplicar(cur, "cliente", tienda, id_, datos, clave, escribir)


def aplicar_producto(cur, tienda: str, sku: str, datos: DatosProducto, clave: str | None = None) -> Aplicado:
    def escribir():
        cur.execute(UPSERT_PRODUCTO_SQL, {"id": sku, "tienda": tienda, "nombre": datos.nombre,
                                          "categoria": datos.categoria, "pvp": Decimal(datos.pvp)})

    return _aplicar(cur, "producto", tienda, sku, datos, clave, escribir)


def aplicar_stock(cur, tienda: str, sku: str, datos: DatosStock, clave: str | None = None) -> Aplicado:
    def escribir():
        fila = cur.execute(UPSERT_STOCK_SQL, {"id": sku, "tienda": tienda, "unidades": datos.unidades}).fetchone()
        if fila is None:
            raise _rechazo("sku", f"el producto {sku} no existe: envíe antes el producto")

    return _aplicar(cur, "stock", tienda, sku, datos, clave, escribir)


def _pedido_bloqueado(cur, id_: str) -> dict | None:
    """El pedido bloqueado y, leído después del candado, lo que los libros tienen de él."""
    pedido = cur.execute(BLOQUEAR_PEDIDO_SQL, {"id": id_}).fetchone()
    if pedido is None:
        return None
    return pedido | cur.execute(HECHOS_PEDIDO_SQL, {"id": id_}).fetchone()


def _comprobar_libros(cur, id_: str, actual: dict, datos: DatosPedido) -> None:
    """409 si el cuerpo nuevo rompería lo que el libro ya apuntó de este pedido."""
    if datos.cliente_id != actual["cliente_id"] and actual["con_efectos"]:
        raise _rechazo("cliente_id", "el pedido ya tiene reembolsos o compensaciones: no cambia de cliente")
    if actual["cancelado_por_chat"] and datos.estado != "cancelado":
        raise _rechazo("estado", "el cliente canceló el pedido por el chat y se le devolvió lo pagado: "
                                 f"no puede volver a {datos.estado}")
    if actual["estado"] == "entregado" and datos.estado != "entregado" and actual["con_efectos"]:
        raise _rechazo("estado", "el pedido se entregó y ya tiene reembolsos o compensaciones: "
                                 f"no puede volver a {datos.estado}")
    nuevas = {linea.linea: (i, linea) for i, linea in enumerate(datos.lineas)}
    for fila in cur.execute(COMPENSADAS_SQL, {"id": id_}).fetchall():
        n = fila["linea"]
        if n not in nuevas:
            raise _rechazo("lineas", f"la línea {n} tiene compensaciones (reembolsos, cambios, reenvíos "
                                     "o vales): no se puede quitar")
        i, nueva = nuevas[n]
        if nueva.sku != fila["sku"]:
            raise _rechazo(f"lineas.{i}.sku", f"la línea {n} tiene compensaciones: no cambia de producto")
        if Decimal(nueva.precio_unitario) != fila["precio_unitario"]:
            raise _rechazo(f"lineas.{i}.precio_unitario",
                           f"la línea {n} tiene compensaciones: su precio ({fila['precio_unitario']}) no cambia")
        if nueva.unidades < fila["ocupadas"]:
            raise _rechazo(f"lineas.{i}.unidades", f"la línea {n} tiene {fila['ocupadas']} unidades "
                                                   "compensadas: no puede tener menos")


def aplicar_pedido(cur, tienda: str, id_: str, datos: DatosPedido, clave: str | None = None) -> Aplicado:
    coherencia(datos)
    actual = _pedido_bloqueado(cur, id_)
    if actual is not None and actual["tienda"] != tienda:
        raise _rechazo("id", f"el pedido {id_} es de otra tienda")
    hash_, cuerpo = huella(datos)
    if actual is not None and actual["huella"] == hash_:
        return Aplicado("pedido", id_, "sin_cambios", actual["version"])
    if actual is not None:
        _comprobar_libros(cur, id_, actual, datos)
    lineas = datos.lineas
    skus = [lin.sku for lin in lineas]
    refs = cur.execute(REFERENCIAS_SQL, {"cliente_id": datos.cliente_id, "tienda": tienda, "skus": skus}).fetchone()
    if not refs["cliente"]:
        raise _rechazo("cliente_id", f"el cliente {datos.cliente_id} no existe en esta tienda: "
                                     "envíe antes el cliente")
    if refs["faltan"]:
        sku = refs["faltan"][0]
        raise _rechazo(f"lineas.{skus.index(sku)}.sku", f"el producto {sku} no existe: envíe antes el producto")
    importe = sum((Decimal(lin.precio_unitario) * lin.unidades for lin in lineas), Decimal("0"))
    fila = cur.execute(UPSERT_PEDIDO_SQL, {
        "id": id_, "cliente_id": datos.cliente_id, "tienda": tienda, "fecha": datos.fecha,
        "estado": datos.estado, "enviado_en": datos.enviado_en, "entregado_en": datos.entregado_en,
        "importe": importe, "referencia_pago": datos.referencia_pago,
        "metodo_pago": datos.metodo_pago, **_direccion(datos.direccion_envio),
        "actualizar": actual is not None,
    }).fetchone()
    if fila is None and actual is None:
        # Otra petición lo creó entre medias (y el chat pudo ya cancelarlo o reembolsarlo): no
        # se pisa, se aplica otra vez por el camino de un pedido que existe, bloqueado y con sus 409.
        return aplicar_pedido(cur, tienda, id_, datos, clave)
    if fila is None:
        raise _rechazo("id", f"el pedido {id_} es de otra tienda")
    numeros = [lin.linea for lin in lineas]
    if actual is not None:
        cur.execute(BORRAR_LINEAS_SQL, {"id": id_, "lineas": numeros})
    cur.execute(UPSERT_LINEAS_SQL, {
        "id": id_, "lineas": numeros, "skus": skus, "unidades": [lin.unidades for lin in lineas],
        "precios": [Decimal(lin.precio_unitario) for lin in lineas]})
    version = _nueva_version(cur, "pedido", tienda, id_, hash_, cuerpo, clave)
    return _hecho(cur, "pedido", tienda, id_, "creado" if actual is None else "actualizado", version)


def aplicar_estado(cur, tienda: str, id_: str, cambio: CambioEstado, clave: str | None = None,
                   *, ahora: datetime | None = None) -> Aplicado:
    """El caso común y barato: ``enviado`` o ``entregado`` (con fecha) de un pedido existente."""
    actual = _pedido_bloqueado(cur, id_)
    if actual is None or actual["tienda"] != tienda:
        raise PedidoNoEncontrado(id_)
    fecha = cambio.fecha or ahora or datetime.now().astimezone()
    if actual["estado"] == cambio.estado and (
            cambio.fecha is None
            or {"enviado": actual["enviado_en"], "entregado": actual["entregado_en"]}.get(cambio.estado) == fecha
            or cambio.estado in ("pendiente", "cancelado")):
        return Aplicado("estado", id_, "sin_cambios", actual["version"] or 0)
    if actual["cancelado_por_chat"] and cambio.estado != "cancelado":
        raise _rechazo("estado", "el cliente canceló el pedido por el chat y se le devolvió lo pagado: "
                                 f"no puede volver a {cambio.estado}")
    if actual["estado"] == "entregado" and cambio.estado != "entregado" and actual["con_efectos"]:
        raise _rechazo("estado", "el pedido se entregó y ya tiene reembolsos o compensaciones: "
                                 f"no puede volver a {cambio.estado}")
    if cambio.estado in ("enviado", "entregado") and fecha < actual["fecha"]:
        raise _rechazo("fecha", "no puede ser anterior a la fecha del pedido")
    if cambio.estado == "entregado" and actual["enviado_en"] is not None and fecha < actual["enviado_en"] \
            and actual["estado"] in ("enviado", "entregado"):
        raise _rechazo("fecha", "la entrega no puede ser anterior al envío")
    cur.execute(ESTADO_SQL, {"id": id_, "estado": cambio.estado, "fecha": fecha})
    hash_, cuerpo = huella(CambioEstado(estado=cambio.estado, fecha=fecha))
    version = _nueva_version(cur, "pedido", tienda, id_, "estado:" + hash_, cuerpo, clave)
    return _hecho(cur, "pedido", tienda, id_, "actualizado", version, como="estado")
