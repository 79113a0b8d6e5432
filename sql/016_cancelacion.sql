-- Cancelar un pedido sin enviar (issue 27): el pedido entero pasa a 'cancelado', su stock
-- vuelve a la tienda, cada unidad queda compensada en el libro (ya no se reembolsa ni se
-- cambia) y lo pagado se devuelve por la bandeja de salida con UN reembolso de concepto
-- 'cancelacion' por pedido.

-- 1. Ajuste de la tienda: una cancelación por encima de este importe pide firma.
ALTER TABLE politicas_tienda
    ADD COLUMN limite_cancelacion numeric(12,2) NOT NULL DEFAULT 200.00
        CONSTRAINT politicas_tienda_dominio_limite_cancelacion
        CHECK (limite_cancelacion BETWEEN 0 AND 1000000);

-- 2. La operación: una fila por pedido cancelado (un pedido se cancela una vez), con la
-- forma de la vista efectos. importe: lo que se devuelve (lo pagado, 0 si nada).
CREATE TABLE cancelaciones (
    id                  bigserial PRIMARY KEY,
    numero              text GENERATED ALWAYS AS ('CA-' || lpad(id::text, 6, '0')) STORED,
    clave_idempotencia  text NOT NULL UNIQUE,
    thread_id           text NOT NULL,
    tool_call_id        text NOT NULL,
    pedido_id           text NOT NULL UNIQUE REFERENCES pedidos(id),
    cliente_id          text NOT NULL REFERENCES clientes(id),
    tienda              text NOT NULL REFERENCES tiendas(id),
    importe             numeric(12,2) NOT NULL CHECK (importe >= 0),
    motivo              text,
    aprobado_por        text,
    trace_id            text,
    creada              timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX cancelaciones_cliente_idx ON cancelaciones (cliente_id, creada DESC);

-- 3. El dinero: un reembolso de concepto 'cancelacion' ligado a su cancelación (uno por
-- cancelación), por la misma bandeja de salida que los demás.
ALTER TABLE reembolsos DROP CONSTRAINT reembolsos_concepto_check;
ALTER TABLE reembolsos DROP CONSTRAINT reembolsos_concepto_sustitucion;
ALTER TABLE reembolsos
    ADD COLUMN cancelacion_id bigint REFERENCES cancelaciones(id),
    ADD CONSTRAINT reembolsos_concepto_check
        CHECK (concepto IN ('devolucion', 'diferencia', 'anulacion', 'cancelacion')),
    ADD CONSTRAINT reembolsos_concepto_sustitucion
        CHECK ((concepto IN ('diferencia', 'anulacion')) = (sustitucion_id IS NOT NULL)),
    ADD CONSTRAINT reembolsos_concepto_cancelacion
        CHECK ((concepto = 'cancelacion') = (cancelacion_id IS NOT NULL));
CREATE UNIQUE INDEX reembolsos_cancelacion_idx ON reembolsos (cancelacion_id)
    WHERE cancelacion_id IS NOT NULL;

-- 4. El libro: cada unidad del pedido cancelado queda compensada por la cancelación. La
-- CHECK «una operación por unidad» la genera agente/bd/derivados.py de las declaraciones.
ALTER TABLE compensaciones_unidad ADD COLUMN cancelacion_id bigint REFERENCES cancelaciones(id);
CREATE INDEX compensaciones_cancelacion_idx ON compensaciones_unidad (cancelacion_id)
    WHERE cancelacion_id IS NOT NULL;

-- 5. La regla «cancelacion» en la matriz de autoridad: las mismas filas que el reembolso
-- (encargado 300,00, gerente 1.000,00, regional sin límite; dos firmas por encima de
-- 500,00). En cada matriz guardada (la por defecto y las de cada tienda, todas sus
-- versiones): una versión no cambia lo que decidió con sus reglas; sin estas filas,
-- la regla nueva pediría un regional para cualquier importe. Se añaden (INSERT), no
-- se reescribe nada: los disparadores de inmutabilidad son de UPDATE y DELETE.
INSERT INTO reglas_autoridad (matriz_id, regla, dos_firmas_por_encima)
SELECT m.id, 'cancelacion', 500.00
FROM matrices_autoridad m
WHERE NOT EXISTS (SELECT 1 FROM reglas_autoridad r WHERE r.matriz_id = m.id AND r.regla = 'cancelacion');
INSERT INTO limites_autoridad (matriz_id, regla, rol, limite)
SELECT r.matriz_id, r.regla, l.rol, l.limite
FROM reglas_autoridad r,
     (VALUES ('encargado', 300.00), ('gerente', 1000.00), ('regional', NULL::numeric)) AS l(rol, limite)
WHERE r.regla = 'cancelacion'
  AND NOT EXISTS (SELECT 1 FROM limites_autoridad x
                  WHERE x.matriz_id = r.matriz_id AND x.regla = r.regla AND x.rol = l.rol);
