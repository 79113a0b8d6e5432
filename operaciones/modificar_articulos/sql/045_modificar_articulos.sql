-- Modificar los artículos de un pedido pendiente (issue 41, séptima operación; τ²-bench retail
-- «modify pending order items»): antes del envío, la unidad de una línea se cambia por otra
-- variante del mismo producto (talla, color) con stock en la tienda del pedido.
-- Todo lo suyo está en operaciones/modificar_articulos/ (README.md).

-- 1. Las variantes: productos del mismo modelo que se distinguen por talla y/o color. Un
--    producto sin fila aquí no tiene variantes (no se modifica).
CREATE TABLE variantes (
    sku     text PRIMARY KEY REFERENCES productos(sku),
    modelo  text NOT NULL CHECK (length(modelo) BETWEEN 1 AND 100),
    talla   text CHECK (length(talla) BETWEEN 1 AND 20),
    color   text CHECK (length(color) BETWEEN 1 AND 40),
    CHECK (talla IS NOT NULL OR color IS NOT NULL)
);
CREATE INDEX variantes_modelo_idx ON variantes (modelo);

-- 2. El asiento de cada modificación: idempotente por (thread_id, tool_call_id). diferencia =
--    precio de la variante nueva en la tienda del pedido - lo pagado por la unidad (positiva:
--    la paga el cliente con un cobro; negativa: se le devuelve con un reembolso; nunca dos).
CREATE TABLE modificaciones_articulos (
    id                  bigserial PRIMARY KEY,
    numero              text GENERATED ALWAYS AS ('MA-' || lpad(id::text, 6, '0')) STORED UNIQUE,
    clave_idempotencia  text NOT NULL UNIQUE,
    thread_id           text NOT NULL,
    tool_call_id        text NOT NULL,
    pedido_id           text NOT NULL REFERENCES pedidos(id),
    cliente_id          text NOT NULL REFERENCES clientes(id),
    tienda              text NOT NULL REFERENCES tiendas(id),
    linea               integer NOT NULL CHECK (linea > 0),
    linea_nueva         integer NOT NULL CHECK (linea_nueva > 0),
    sku_original        text NOT NULL REFERENCES productos(sku),
    sku_nuevo           text NOT NULL REFERENCES productos(sku),
    precio_original     numeric(12,2) NOT NULL CHECK (precio_original >= 0),
    precio_nuevo        numeric(12,2) NOT NULL CHECK (precio_nuevo >= 0),
    diferencia          numeric(12,2) NOT NULL,
    liquidacion         text NOT NULL CHECK (liquidacion IN ('ninguna', 'cobro', 'reembolso')),
    aprobado_por        text,
    trace_id            text,
    creada              timestamptz NOT NULL DEFAULT now(),
    UNIQUE (thread_id, tool_call_id),
    CHECK (sku_original <> sku_nuevo),
    CHECK (diferencia = precio_nuevo - precio_original),
    CHECK ((liquidacion = 'ninguna') = (diferencia = 0)
           AND (liquidacion <> 'cobro' OR diferencia > 0)
           AND (liquidacion <> 'reembolso' OR diferencia < 0))
);
CREATE INDEX modificaciones_articulos_cliente_idx ON modificaciones_articulos (cliente_id, creada);

-- 3. La diferencia por la bandeja de salida de la pasarela (caja/movimientos.py): un
--    cobro o un reembolso (concepto 'modificacion', que la CHECK derivada de reembolsos.concepto
--    admite por la declaración) ligado a la modificación, uno como mucho.
ALTER TABLE reembolsos ADD COLUMN modificacion_id bigint REFERENCES modificaciones_articulos(id);
ALTER TABLE reembolsos ADD CONSTRAINT reembolsos_concepto_modificacion
    CHECK ((concepto = 'modificacion') = (modificacion_id IS NOT NULL));
CREATE UNIQUE INDEX reembolsos_modificacion_idx ON reembolsos (modificacion_id) WHERE modificacion_id IS NOT NULL;
ALTER TABLE cobros ALTER COLUMN sustitucion_id DROP NOT NULL;
ALTER TABLE cobros ADD COLUMN modificacion_id bigint UNIQUE REFERENCES modificaciones_articulos(id);
ALTER TABLE cobros ADD CONSTRAINT cobros_de_un_cambio_o_una_modificacion
    CHECK ((sustitucion_id IS NULL) <> (modificacion_id IS NULL));

-- 4. El ajuste de la tienda (operaciones/modificar_articulos/politica.py dice lo mismo): una
--    diferencia de precio mayor, en cualquier sentido, la firma una persona.
ALTER TABLE politicas_tienda
    ADD COLUMN umbral_modificacion_articulos numeric(12,2) NOT NULL DEFAULT 60.00
        CONSTRAINT politicas_tienda_dominio_umbral_modificacion_articulos
        CHECK (umbral_modificacion_articulos BETWEEN 0 AND 1000000);
