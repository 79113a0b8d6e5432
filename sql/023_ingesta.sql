-- API de ingesta del back office de la tienda (issue 29, punto 1): claves de API con
-- alcances, la referencia de pago de cada pedido y las versiones de lo ingerido.

-- 1. La referencia del pago original (la de la pasarela de la tienda). La migración de la
-- pasarela de Stripe añade la misma columna con el mismo nombre: IF NOT EXISTS, sin choque.
ALTER TABLE pedidos ADD COLUMN IF NOT EXISTS referencia_pago text;

-- 2. Claves de API del back office, separadas de los tokens de personas. Se guarda el hash
-- (sha256 de la clave entera: 256 bits aleatorios, no hace falta un hash lento) y el
-- prefijo, que es lo que se enseña y con lo que se revoca. La clave solo se ve al crearla.
CREATE TABLE claves_api (
    id          bigserial PRIMARY KEY,
    prefijo     text NOT NULL UNIQUE CHECK (prefijo ~ '^[a-z0-9]{8}$'),
    hash        text NOT NULL UNIQUE CHECK (hash ~ '^[0-9a-f]{64}$'),
    tienda      text NOT NULL REFERENCES tiendas(id),
    nombre      text NOT NULL CHECK (length(nombre) BETWEEN 1 AND 100),
    alcances    text[] NOT NULL CHECK (cardinality(alcances) > 0 AND alcances <@ ARRAY[
                    'clientes', 'productos', 'stock', 'pedidos', 'estados']::text[]),
    creada      timestamptz NOT NULL DEFAULT now(),
    creada_por  text NOT NULL,
    revocada    timestamptz,
    usada       timestamptz
);

-- 3. Lo último ingerido de cada registro (tipo, tienda, id propio): su huella (sha256 del
-- cuerpo canónico) decide si un cuerpo repetido no cambia nada, y su versión.
CREATE TABLE ingesta_registros (
    tipo         text NOT NULL CHECK (tipo IN ('cliente', 'producto', 'stock', 'pedido')),
    tienda       text NOT NULL REFERENCES tiendas(id),
    id           text NOT NULL,
    version      integer NOT NULL CHECK (version >= 1),
    huella       text NOT NULL,
    actualizado  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tipo, tienda, id)
);

-- Cada versión aceptada, con su cuerpo y su marca de tiempo (quién y cuándo cambió qué).
CREATE TABLE ingesta_versiones (
    tipo      text NOT NULL,
    tienda    text NOT NULL,
    id        text NOT NULL,
    version   integer NOT NULL,
    huella    text NOT NULL,
    datos     jsonb NOT NULL,
    clave     text,
    recibida  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tipo, tienda, id, version),
    FOREIGN KEY (tipo, tienda, id) REFERENCES ingesta_registros (tipo, tienda, id)
);
