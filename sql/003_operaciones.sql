-- Efectos que mueven dinero y stock, idempotentes por (hilo, tool_call_id).
CREATE TABLE reembolsos (
    id                  bigserial PRIMARY KEY,
    numero              text GENERATED ALWAYS AS ('RE-' || lpad(id::text, 6, '0')) STORED,
    clave_idempotencia  text NOT NULL UNIQUE,
    thread_id           text NOT NULL,
    tool_call_id        text NOT NULL,
    pedido_id           text NOT NULL REFERENCES pedidos(id),
    cliente_id          text NOT NULL REFERENCES clientes(id),
    tienda              text NOT NULL REFERENCES tiendas(id),
    importe             numeric(12,2) NOT NULL CHECK (importe > 0),
    motivo              text,
    lineas              jsonb,
    estado              text NOT NULL DEFAULT 'pendiente' CHECK (estado IN ('pendiente', 'emitido')),
    aprobado_por        text,
    trace_id            text,
    creado              timestamptz NOT NULL DEFAULT now(),
    emitido_en          timestamptz
);
CREATE INDEX reembolsos_pedido_idx ON reembolsos (pedido_id);
CREATE INDEX reembolsos_pendientes_idx ON reembolsos (creado) WHERE estado = 'pendiente';

CREATE TABLE sustituciones (
    id                  bigserial PRIMARY KEY,
    numero              text GENERATED ALWAYS AS ('SU-' || lpad(id::text, 6, '0')) STORED,
    clave_idempotencia  text NOT NULL UNIQUE,
    thread_id           text NOT NULL,
    tool_call_id        text NOT NULL,
    pedido_id           text NOT NULL REFERENCES pedidos(id),
    cliente_id          text NOT NULL REFERENCES clientes(id),
    tienda              text NOT NULL REFERENCES tiendas(id),
    sku_original        text NOT NULL REFERENCES productos(sku),
    sku_nuevo           text NOT NULL REFERENCES productos(sku),
    pvp_original        numeric(12,2) NOT NULL,
    pvp_nuevo           numeric(12,2) NOT NULL,
    diferencia          numeric(12,2) GENERATED ALWAYS AS (pvp_nuevo - pvp_original) STORED,
    estado              text NOT NULL DEFAULT 'hecha' CHECK (estado IN ('hecha')),
    aprobado_por        text,
    trace_id            text,
    creada              timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sustituciones_pedido_idx ON sustituciones (pedido_id);

-- Tabla propia de la pasarela simulada: UNIQUE(referencia) como la clave de
-- idempotencia de un proveedor de pagos real.
CREATE TABLE pasarela_movimientos (
    id          bigserial PRIMARY KEY,
    referencia  text NOT NULL UNIQUE,
    importe     numeric(12,2) NOT NULL CHECK (importe > 0),
    creado      timestamptz NOT NULL DEFAULT now()
);
