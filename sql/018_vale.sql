-- Vale de compensación (issue 27): un vale con código único (VA- y diez dígitos), importe,
-- caducidad y cliente, por una línea de un pedido entregado. No mueve dinero por la
-- pasarela: es un pasivo de la tienda (lo que debe en vales vivos) hasta que se canjea o
-- caduca. No ocupa unidades del libro (el cliente se queda el producto); un reembolso o
-- un cambio posterior del mismo pedido lo ve la política y pide firma (docs/operaciones/vale.md).

CREATE TABLE vales (
    id                  bigserial PRIMARY KEY,
    -- El código es el número del vale: lo lee el cliente y lo canjea en caja. Aleatorio
    -- (lo genera la herramienta), nunca consecutivo: un código adivinable sería dinero.
    numero              text NOT NULL UNIQUE CHECK (numero ~ '^VA-[0-9]{10}$'),
    clave_idempotencia  text NOT NULL UNIQUE,
    thread_id           text NOT NULL,
    tool_call_id        text NOT NULL CHECK (tool_call_id <> ''),
    pedido_id           text NOT NULL REFERENCES pedidos(id),
    linea               integer NOT NULL,
    cliente_id          text NOT NULL REFERENCES clientes(id),
    tienda              text NOT NULL REFERENCES tiendas(id),
    importe             numeric(12,2) NOT NULL CHECK (importe > 0),
    motivo              text NOT NULL CHECK (length(motivo) BETWEEN 1 AND 500),
    caduca              date NOT NULL,
    estado              text NOT NULL DEFAULT 'emitido'
                        CHECK (estado IN ('emitido', 'canjeado', 'anulado')),
    aprobado_por        text,
    trace_id            text,
    creado              timestamptz NOT NULL DEFAULT now(),
    UNIQUE (thread_id, tool_call_id),
    FOREIGN KEY (pedido_id, linea) REFERENCES lineas_pedido(pedido_id, linea),
    CHECK (caduca > creado::date)
);
CREATE INDEX vales_cliente_idx ON vales (cliente_id, creado);
CREATE INDEX vales_pedido_idx ON vales (pedido_id);

-- El pasivo: lo que la tienda debe en vales emitidos y aún no caducados.
CREATE VIEW vales_pasivo AS
SELECT tienda, count(*)::int AS vales, coalesce(sum(importe), 0)::numeric(12,2) AS importe
FROM vales
WHERE estado = 'emitido' AND caduca >= current_date
GROUP BY tienda;

-- Los valores de la política con su dominio (politicas/valores.py dice lo mismo).
ALTER TABLE politicas_tienda
    ADD COLUMN vale_porcentaje_max integer NOT NULL DEFAULT 10
        CONSTRAINT politicas_tienda_dominio_vale_porcentaje_max CHECK (vale_porcentaje_max BETWEEN 0 AND 100),
    ADD COLUMN vale_importe_max numeric(12,2) NOT NULL DEFAULT 10.00
        CONSTRAINT politicas_tienda_dominio_vale_importe_max CHECK (vale_importe_max BETWEEN 0 AND 1000000),
    ADD COLUMN vale_dias_caducidad integer NOT NULL DEFAULT 365
        CONSTRAINT politicas_tienda_dominio_vale_dias_caducidad CHECK (vale_dias_caducidad BETWEEN 30 AND 1095);

-- Las filas de la regla «vale» (EnMatriz de nucleo.operaciones.VALE): una versión
-- nueva de la matriz por defecto vigente y de la vigente de cada tienda con matriz propia,
-- copia de la anterior más las filas nuevas. Las versiones antiguas no se tocan (trigger).
DO $$
DECLARE
    vigente record;
    nueva bigint;
BEGIN
    FOR vigente IN
        SELECT m.id, m.tienda, m.version FROM matrices_autoridad m
        WHERE m.version = (SELECT max(x.version) FROM matrices_autoridad x
                           WHERE x.tienda IS NOT DISTINCT FROM m.tienda)
          AND NOT EXISTS (SELECT 1 FROM reglas_autoridad r WHERE r.matriz_id = m.id AND r.regla = 'vale')
    LOOP
        INSERT INTO matrices_autoridad (tienda, version, creada_por, motivo)
        VALUES (vigente.tienda, vigente.version + 1, 'sistema', 'filas por defecto de vale (sql/018_vale.sql)')
        RETURNING id INTO nueva;
        INSERT INTO reglas_autoridad (matriz_id, regla, dos_firmas_por_encima)
        SELECT nueva, regla, dos_firmas_por_encima FROM reglas_autoridad WHERE matriz_id = vigente.id
        UNION ALL SELECT nueva, 'vale', NULL;
        INSERT INTO limites_autoridad (matriz_id, regla, rol, limite)
        SELECT nueva, regla, rol, limite FROM limites_autoridad WHERE matriz_id = vigente.id
        UNION ALL
        SELECT nueva, 'vale', l.rol, l.limite
        FROM (VALUES ('encargado', 50.00), ('gerente', 300.00), ('regional', NULL::numeric)) AS l(rol, limite)
        WHERE EXISTS (SELECT 1 FROM roles_firma f WHERE f.rol = l.rol);
    END LOOP;
END
$$;
