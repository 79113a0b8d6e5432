-- Pasarela de un proveedor real (issue 29, Stripe): la referencia del pago de cada pedido
-- (contra ella van los reembolsos), el id que el proveedor da a cada movimiento, el enlace
-- de pago de un cobro y cuándo caduca, y los eventos (webhooks) ya aplicados.

-- La API de ingesta añade la misma columna: IF NOT EXISTS para que las dos ramas convivan.
ALTER TABLE pedidos ADD COLUMN IF NOT EXISTS referencia_pago text;

ALTER TABLE reembolsos ADD COLUMN IF NOT EXISTS id_proveedor text;

ALTER TABLE cobros
    ADD COLUMN IF NOT EXISTS id_proveedor text,
    ADD COLUMN IF NOT EXISTS enlace_pago text,
    ADD COLUMN IF NOT EXISTS caduca_en timestamptz;

-- Un cobro por enlace que el cliente no paga a tiempo caduca: su cambio se anula.
ALTER TABLE cobros DROP CONSTRAINT IF EXISTS cobros_estado_check;
ALTER TABLE cobros ADD CONSTRAINT cobros_estado_check
    CHECK (estado IN ('pendiente', 'confirmado', 'caducado'));

-- Cada evento del proveedor se aplica una vez: su id es la clave.
CREATE TABLE IF NOT EXISTS pasarela_eventos (
    id          text PRIMARY KEY,
    tipo        text NOT NULL,
    referencia  text,
    resultado   text NOT NULL,
    recibido    timestamptz NOT NULL DEFAULT now()
);
