-- Tiendas, clientes, catálogo, stock y pedidos.
CREATE TABLE tiendas (
    id          text PRIMARY KEY CHECK (id ~ '^[a-z0-9-]+$'),
    nombre      text NOT NULL,
    creada      timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE clientes (
    id          text PRIMARY KEY,
    tienda      text NOT NULL REFERENCES tiendas(id),
    nombre      text NOT NULL,
    email       text,
    telefono    text,
    creado      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX clientes_tienda_idx ON clientes (tienda);

CREATE TABLE productos (
    sku         text PRIMARY KEY,
    nombre      text NOT NULL,
    categoria   text NOT NULL,
    pvp         numeric(12,2) NOT NULL CHECK (pvp >= 0)
);
CREATE INDEX productos_categoria_idx ON productos (categoria);

CREATE TABLE stock (
    sku         text NOT NULL REFERENCES productos(sku),
    tienda      text NOT NULL REFERENCES tiendas(id),
    unidades    integer NOT NULL CHECK (unidades >= 0),
    PRIMARY KEY (tienda, sku)
);

CREATE TABLE pedidos (
    id            text PRIMARY KEY CHECK (id ~ '^P-[0-9]{8}-[0-9]{4}$'),
    cliente_id    text NOT NULL REFERENCES clientes(id),
    tienda        text NOT NULL REFERENCES tiendas(id),
    fecha         timestamptz NOT NULL,
    estado        text NOT NULL CHECK (estado IN ('pendiente', 'enviado', 'entregado', 'cancelado')),
    entregado_en  timestamptz,
    importe       numeric(12,2) NOT NULL CHECK (importe >= 0),
    CHECK ((estado = 'entregado') = (entregado_en IS NOT NULL))
);
CREATE INDEX pedidos_cliente_idx ON pedidos (cliente_id, fecha DESC);

CREATE TABLE lineas_pedido (
    pedido_id        text NOT NULL REFERENCES pedidos(id),
    linea            integer NOT NULL CHECK (linea > 0),
    sku              text NOT NULL REFERENCES productos(sku),
    unidades         integer NOT NULL CHECK (unidades > 0),
    precio_unitario  numeric(12,2) NOT NULL CHECK (precio_unitario >= 0),
    importe          numeric(12,2) GENERATED ALWAYS AS (unidades * precio_unitario) STORED,
    PRIMARY KEY (pedido_id, linea)
);

CREATE TABLE devoluciones (
    id            bigserial PRIMARY KEY,
    pedido_id     text NOT NULL REFERENCES pedidos(id),
    cliente_id    text NOT NULL REFERENCES clientes(id),
    tienda        text NOT NULL REFERENCES tiendas(id),
    importe       numeric(12,2) NOT NULL CHECK (importe > 0),
    motivo        text,
    reembolso_id  bigint,
    creada        timestamptz NOT NULL DEFAULT now()
);
-- Sirve al recuento de devoluciones de los últimos N días en la política.
CREATE INDEX devoluciones_cliente_creada_idx ON devoluciones (cliente_id, creada DESC);

CREATE TABLE encargados (
    id          text PRIMARY KEY,
    tienda      text NOT NULL REFERENCES tiendas(id),
    nombre      text NOT NULL,
    activo      boolean NOT NULL DEFAULT true
);
CREATE INDEX encargados_tienda_idx ON encargados (tienda);
