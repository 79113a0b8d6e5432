-- Los datos de demo de modificar_articulos (agente/demo/carga.py los carga detrás de los
-- demás, en la misma transacción; cargar dos veces deja lo mismo).
--
-- Variantes: la camisa Oxford blanca en M, L y XL (la XL agotada en las dos tiendas), la
-- misma en azul M (5,00 EUR más) y la chaqueta de piel negra M y coñac M (70,00 EUR más: por
-- encima del umbral de 60,00 EUR, firma un encargado).
-- Pedidos de Elena (C-0005, Talavera):
--   P-20261013-0510 pendiente, una camisa blanca talla M (talla L con stock);
--   P-20261013-0511 pendiente, una chaqueta de piel negra talla M (la coñac pide firma);
--   P-20261013-0512 enviado, una camisa blanca talla M (ya no se modifica).

INSERT INTO productos (sku, nombre, categoria, pvp_referencia) VALUES
    ('CAM-011', 'Camisa Oxford blanca, talla M', 'moda', 29.90),
    ('CAM-012', 'Camisa Oxford blanca, talla L', 'moda', 29.90),
    ('CAM-013', 'Camisa Oxford blanca, talla XL', 'moda', 29.90),
    ('CAM-014', 'Camisa Oxford azul, talla M', 'moda', 34.90),
    ('CHA-021', 'Chaqueta de piel negra, talla M', 'moda', 149.00),
    ('CHA-022', 'Chaqueta de piel coñac, talla M', 'moda', 219.00)
ON CONFLICT (sku) DO UPDATE SET nombre = EXCLUDED.nombre, categoria = EXCLUDED.categoria,
                                pvp_referencia = EXCLUDED.pvp_referencia;

INSERT INTO variantes (sku, modelo, talla, color) VALUES
    ('CAM-011', 'camisa-oxford', 'M', 'blanco'),
    ('CAM-012', 'camisa-oxford', 'L', 'blanco'),
    ('CAM-013', 'camisa-oxford', 'XL', 'blanco'),
    ('CAM-014', 'camisa-oxford', 'M', 'azul'),
    ('CHA-021', 'chaqueta-piel', 'M', 'negro'),
    ('CHA-022', 'chaqueta-piel', 'M', 'coñac')
ON CONFLICT (sku) DO UPDATE SET modelo = EXCLUDED.modelo, talla = EXCLUDED.talla, color = EXCLUDED.color;

INSERT INTO precios_tienda (tienda, sku, pvp)
SELECT t.id, p.sku, p.pvp_referencia
FROM tiendas t CROSS JOIN productos p
WHERE t.id IN ('talavera', 'madrid-centro') AND p.sku IN ('CAM-011', 'CAM-012', 'CAM-013', 'CAM-014', 'CHA-021', 'CHA-022')
ON CONFLICT (tienda, sku) DO UPDATE SET pvp = EXCLUDED.pvp;

INSERT INTO stock (sku, tienda, unidades)
SELECT s.sku, t.id, s.unidades
FROM (VALUES ('CAM-011', 5), ('CAM-012', 4), ('CAM-013', 0), ('CAM-014', 3), ('CHA-021', 2), ('CHA-022', 2))
     AS s(sku, unidades)
CROSS JOIN tiendas t WHERE t.id IN ('talavera', 'madrid-centro')
ON CONFLICT (tienda, sku) DO UPDATE SET unidades = EXCLUDED.unidades;

INSERT INTO pedidos (id, cliente_id, tienda, fecha, estado, entregado_en, importe, enviado_en,
                     calle, codigo_postal, localidad, provincia, referencia_pago)
SELECT p.id, c.id, c.tienda, now() - make_interval(days => p.dias), p.estado, NULL, p.importe,
       CASE WHEN p.estado = 'enviado' THEN now() - interval '1 day' END,
       c.calle, c.codigo_postal, c.localidad, c.provincia,
       'pi_demo_' || lower(replace(p.id, '-', '_'))
FROM (VALUES ('P-20261013-0510', 1, 'pendiente', 29.90),
             ('P-20261013-0511', 1, 'pendiente', 149.00),
             ('P-20261013-0512', 2, 'enviado', 29.90)) AS p(id, dias, estado, importe)
JOIN clientes c ON c.id = 'C-0005'
ON CONFLICT (id) DO UPDATE SET cliente_id = EXCLUDED.cliente_id, tienda = EXCLUDED.tienda,
    fecha = EXCLUDED.fecha, estado = EXCLUDED.estado, entregado_en = NULL, importe = EXCLUDED.importe,
    enviado_en = EXCLUDED.enviado_en, calle = EXCLUDED.calle, codigo_postal = EXCLUDED.codigo_postal,
    localidad = EXCLUDED.localidad, provincia = EXCLUDED.provincia;

INSERT INTO lineas_pedido (pedido_id, linea, sku, unidades, precio_unitario) VALUES
    ('P-20261013-0510', 1, 'CAM-011', 1, 29.90),
    ('P-20261013-0511', 1, 'CHA-021', 1, 149.00),
    ('P-20261013-0512', 1, 'CAM-011', 1, 29.90)
ON CONFLICT (pedido_id, linea) DO UPDATE
SET sku = EXCLUDED.sku, unidades = EXCLUDED.unidades, precio_unitario = EXCLUDED.precio_unitario;
