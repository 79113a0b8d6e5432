-- Cambiar la dirección de envío de un pedido pendiente (issue 27, operación 4).
--
-- Pedidos y clientes ganan una dirección española estructurada; la provincia sale de los
-- dos primeros dígitos del código postal (nucleo.direcciones, la misma tabla).
-- Un cambio no mueve dinero ni género: su sitio en el libro es cambios_direccion (una
-- fila por cambio, con la dirección antigua y la nueva), sin movimiento de pasarela.

-- 1. La dirección: nula en lo que ya había (sin dirección, el cambio la estrena).
ALTER TABLE clientes
    ADD COLUMN calle          text CHECK (length(calle) BETWEEN 1 AND 200),
    ADD COLUMN codigo_postal  text CHECK (codigo_postal ~ '^(0[1-9]|[1-4][0-9]|5[0-2])[0-9]{3}$'),
    ADD COLUMN localidad      text CHECK (length(localidad) BETWEEN 1 AND 100),
    ADD COLUMN provincia      text;
ALTER TABLE pedidos
    ADD COLUMN calle          text CHECK (length(calle) BETWEEN 1 AND 200),
    ADD COLUMN codigo_postal  text CHECK (codigo_postal ~ '^(0[1-9]|[1-4][0-9]|5[0-2])[0-9]{3}$'),
    ADD COLUMN localidad      text CHECK (length(localidad) BETWEEN 1 AND 100),
    ADD COLUMN provincia      text;

-- 2. El registro de cada cambio: idempotente por (thread_id, tool_call_id). importe: el del
-- pedido al cambiarla (lo que la matriz de autoridad mira para decidir quién firma).
CREATE TABLE cambios_direccion (
    id                   bigserial PRIMARY KEY,
    numero               text GENERATED ALWAYS AS ('CD-' || lpad(id::text, 6, '0')) STORED UNIQUE,
    thread_id            text NOT NULL,
    tool_call_id         text NOT NULL,
    pedido_id            text NOT NULL REFERENCES pedidos(id),
    cliente_id           text NOT NULL REFERENCES clientes(id),
    tienda               text NOT NULL REFERENCES tiendas(id),
    importe              numeric(12,2) NOT NULL CHECK (importe >= 0),
    calle_anterior       text,
    codigo_postal_anterior text,
    localidad_anterior   text,
    provincia_anterior   text,
    calle                text NOT NULL,
    codigo_postal        text NOT NULL CHECK (codigo_postal ~ '^(0[1-9]|[1-4][0-9]|5[0-2])[0-9]{3}$'),
    localidad            text NOT NULL,
    provincia            text NOT NULL,
    aprobado_por         text,
    trace_id             text,
    valores_politica     jsonb,
    creado               timestamptz NOT NULL DEFAULT now(),
    UNIQUE (thread_id, tool_call_id)
);
CREATE INDEX cambios_direccion_cliente_idx ON cambios_direccion (cliente_id, creado);

-- 3. El ajuste de la tienda, con su dominio (politicas/valores.py): un pedido de más
-- importe pide firma para cambiar su dirección aunque no cambie de provincia.
ALTER TABLE politicas_tienda
    ADD COLUMN limite_cambio_direccion numeric(12,2) NOT NULL DEFAULT 150.00
        CONSTRAINT politicas_tienda_dominio_limite_cambio_direccion
        CHECK (limite_cambio_direccion BETWEEN 0 AND 1000000);

-- 4. La regla «direccion» en cada matriz vigente (la por defecto y la de cada tienda):
-- una versión nueva con todo lo que tenía más las filas por defecto de la regla
-- (nucleo.operaciones.DIRECCION: encargado hasta 1.000,00 EUR, gerente y regional
-- sin límite; nunca dos firmas). Las versiones no se modifican (sql/008).
DO $$
DECLARE
    vigente record;
    nueva bigint;
BEGIN
    FOR vigente IN
        SELECT DISTINCT ON (tienda) id, tienda, version
        FROM matrices_autoridad ORDER BY tienda, version DESC
    LOOP
        CONTINUE WHEN EXISTS (SELECT 1 FROM reglas_autoridad
                              WHERE matriz_id = vigente.id AND regla = 'direccion');
        INSERT INTO matrices_autoridad (tienda, version, creada_por, motivo)
        VALUES (vigente.tienda, vigente.version + 1, 'sistema',
                'filas por defecto de direccion (sql/019_direccion.sql)')
        RETURNING id INTO nueva;
        INSERT INTO reglas_autoridad (matriz_id, regla, dos_firmas_por_encima)
        SELECT nueva, regla, dos_firmas_por_encima FROM reglas_autoridad WHERE matriz_id = vigente.id
        UNION ALL SELECT nueva, 'direccion', NULL;
        INSERT INTO limites_autoridad (matriz_id, regla, rol, limite)
        SELECT nueva, regla, rol, limite FROM limites_autoridad WHERE matriz_id = vigente.id
        UNION ALL
        SELECT nueva, 'direccion', l.rol, l.limite
        FROM (VALUES ('encargado', 1000.00), ('gerente', NULL::numeric), ('regional', NULL::numeric))
             AS l(rol, limite);
    END LOOP;
END
$$;
