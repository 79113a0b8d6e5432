-- Reenvío de lo que no llegó o llegó roto (issue 27, punto 2): un envío nuevo del mismo
-- producto sin cargo, del stock de la tienda del pedido, apuntado como fila de envío
-- ligada a la línea original. Las unidades reenviadas quedan compensadas en el libro (ya
-- no se reembolsan ni se cambian). No mueve dinero por la pasarela.

-- 1. La fecha de envío: un pedido 'enviado' hace más de dias_reparto_maximos cuenta como
-- perdido. Los de antes, con su fecha de compra (lo más parecido que hay: envío el día
-- de la compra, nunca después de la entrega).
ALTER TABLE pedidos ADD COLUMN enviado_en timestamptz;
UPDATE pedidos SET enviado_en = least(fecha, coalesce(entregado_en, fecha))
WHERE estado IN ('enviado', 'entregado') AND enviado_en IS NULL;
ALTER TABLE pedidos
    ADD CONSTRAINT pedidos_enviado_antes_de_entregado
        CHECK (enviado_en IS NULL OR entregado_en IS NULL OR enviado_en <= entregado_en);

-- 2. Los ajustes de la tienda, con su dominio (politicas/valores.py dice lo mismo).
ALTER TABLE politicas_tienda
    ADD COLUMN limite_reenvio numeric(12,2) NOT NULL DEFAULT 50.00
        CONSTRAINT politicas_tienda_dominio_limite_reenvio CHECK (limite_reenvio BETWEEN 0 AND 1000000),
    ADD COLUMN dias_reparto_maximos integer NOT NULL DEFAULT 3
        CONSTRAINT politicas_tienda_dominio_dias_reparto_maximos CHECK (dias_reparto_maximos BETWEEN 1 AND 60);

-- 3. Los reenvíos: una fila por envío nuevo, idempotente por (hilo, llamada). valor: lo
-- que el cliente pagó por las unidades reenviadas (lo que autoriza la firma); vez: 1 el
-- primer reenvío de la línea, 2 el segundo... (el segundo siempre lo firma alguien).
CREATE TABLE reenvios (
    id                  bigserial PRIMARY KEY,
    numero              text GENERATED ALWAYS AS ('RV-' || lpad(id::text, 6, '0')) STORED,
    clave_idempotencia  text NOT NULL UNIQUE,
    thread_id           text NOT NULL,
    tool_call_id        text NOT NULL,
    pedido_id           text NOT NULL REFERENCES pedidos(id),
    cliente_id          text NOT NULL REFERENCES clientes(id),
    tienda              text NOT NULL REFERENCES tiendas(id),
    linea               integer NOT NULL,
    sku                 text NOT NULL REFERENCES productos(sku),
    unidades            integer NOT NULL CHECK (unidades > 0),
    motivo              text NOT NULL CHECK (motivo IN ('no_llego', 'llego_roto')),
    descripcion         text CHECK (length(descripcion) <= 500),
    valor               numeric(12,2) NOT NULL CHECK (valor >= 0),
    vez                 integer NOT NULL CHECK (vez >= 1),
    aprobado_por        text,
    trace_id            text,
    valores_politica    jsonb,
    creado              timestamptz NOT NULL DEFAULT now(),
    UNIQUE (thread_id, tool_call_id),
    FOREIGN KEY (pedido_id, linea) REFERENCES lineas_pedido (pedido_id, linea)
);
CREATE INDEX reenvios_pedido_idx ON reenvios (pedido_id, linea);
CREATE INDEX reenvios_cliente_idx ON reenvios (cliente_id, creado DESC);

-- 4. El libro: una unidad reenviada queda compensada (una fila de compensaciones_unidad
-- con reenvio_id; la CHECK «una operación por unidad» la genera agente/bd/derivados.py). Un
-- segundo reenvío de la misma unidad no añade fila: ya lo estaba.
ALTER TABLE compensaciones_unidad ADD COLUMN reenvio_id bigint REFERENCES reenvios(id);
CREATE INDEX compensaciones_reenvio_idx ON compensaciones_unidad (reenvio_id)
    WHERE reenvio_id IS NOT NULL;

-- 5. La regla «reenvio» en la matriz de autoridad: una versión nueva de cada matriz
-- vigente (la por defecto y la de cada tienda) con sus filas por defecto, las que declara
-- nucleo.operaciones (REENVIO.matriz): encargado hasta 300,00 EUR, gerente hasta
-- 1.000,00 EUR, regional sin límite; nunca dos firmas.
DO $$
DECLARE
    m record;
    nueva bigint;
BEGIN
    FOR m IN
        SELECT x.* FROM matrices_autoridad x
        WHERE x.version = (SELECT max(y.version) FROM matrices_autoridad y
                           WHERE y.tienda IS NOT DISTINCT FROM x.tienda)
          AND NOT EXISTS (SELECT 1 FROM reglas_autoridad r WHERE r.matriz_id = x.id AND r.regla = 'reenvio')
        ORDER BY x.tienda NULLS FIRST
    LOOP
        INSERT INTO matrices_autoridad (tienda, version, creada_por, motivo)
        VALUES (m.tienda, m.version + 1, 'sistema', 'filas por defecto de reenvio (sql/017_reenvio.sql)')
        RETURNING id INTO nueva;
        INSERT INTO reglas_autoridad (matriz_id, regla, dos_firmas_por_encima)
        SELECT nueva, r.regla, r.dos_firmas_por_encima FROM reglas_autoridad r WHERE r.matriz_id = m.id
        UNION ALL
        SELECT nueva, 'reenvio', NULL;
        INSERT INTO limites_autoridad (matriz_id, regla, rol, limite)
        SELECT nueva, l.regla, l.rol, l.limite FROM limites_autoridad l WHERE l.matriz_id = m.id
        UNION ALL
        SELECT nueva, 'reenvio', d.rol, d.limite
        FROM (VALUES ('encargado', 300.00), ('gerente', 1000.00), ('regional', NULL::numeric))
             AS d(rol, limite);
    END LOOP;
END
$$;
