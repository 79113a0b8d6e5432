-- Precio por tienda (issue 38, punto 4). Hasta ahora productos.pvp era un precio de catálogo
-- común: la clave de API de una tienda lo cambiaba para todas, y un cambio de otra tienda
-- liquidaba la diferencia de un cambio de producto en la tuya (una clave de talavera puso
-- CAF-003 a 60,01 y un cliente de madrid-centro cobró 59,99 EUR al cambiar su cafetera).
--
-- Decisión: una tabla precios_tienda (tienda, sku, pvp), no una columna pvp en stock. El
-- precio y las unidades son datos distintos que llegan por registros distintos (producto y
-- stock): una fila de stock sin precio, o un precio sin fila de stock (el producto original
-- de una línea que la tienda ya no tiene), obligarían a una columna que admite NULL o a que
-- el registro de stock trajera precio. Aquí cada fila dice «esta tienda lo vende a este
-- precio»; sin fila, la tienda no lo vende: no se ofrece como cambio ni se cambia a él.
--
-- productos.pvp pasa a productos.pvp_referencia: el precio con el que el producto entró en
-- el catálogo (la demo o la primera tienda que lo manda), que ninguna tienda cambia después
-- y que no lee nada que liquide dinero ni enseñe un precio al cliente. Se renombra para que
-- una lectura olvidada de productos.pvp falle en vez de cobrar con el precio de otra tienda.

CREATE TABLE precios_tienda (
    tienda  text NOT NULL REFERENCES tiendas(id),
    sku     text NOT NULL REFERENCES productos(sku),
    pvp     numeric(12,2) NOT NULL CHECK (pvp >= 0),
    PRIMARY KEY (tienda, sku)
);

-- Lo que ya había: cada tienda, el precio del catálogo de hoy; salvo si esa tienda mandó el
-- producto por la API de ingesta, que se queda con el último pvp que mandó ella (el de hoy
-- pudo ponerlo otra tienda).
INSERT INTO precios_tienda (tienda, sku, pvp)
SELECT t.id, p.sku, coalesce(
    (SELECT (v.datos ->> 'pvp')::numeric(12,2)
       FROM ingesta_registros r
       JOIN ingesta_versiones v USING (tipo, tienda, id, version)
      WHERE r.tipo = 'producto' AND r.tienda = t.id AND r.id = p.sku AND v.datos ? 'pvp'),
    p.pvp)
FROM tiendas t CROSS JOIN productos p;

ALTER TABLE productos RENAME COLUMN pvp TO pvp_referencia;
COMMENT ON COLUMN productos.pvp_referencia IS
    'Precio con el que el producto entró en el catálogo. Solo informativo: lo que se cobra y '
    'se devuelve sale de precios_tienda (la tienda del pedido).';
COMMENT ON TABLE precios_tienda IS
    'Precio de venta de cada producto en cada tienda; solo lo cambia la clave de API de esa tienda.';
