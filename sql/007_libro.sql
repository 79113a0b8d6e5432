-- Libro de compensaciones: cada unidad de cada línea se compensa una vez como mucho
-- (reembolsada, del todo o en parte, o cambiada), las diferencias de un cambio se
-- liquidan por la pasarela y los movimientos pendientes se completan con reintentos.

-- Ajuste de tienda: una diferencia de precio (en valor absoluto) por debajo de este
-- importe no se liquida. 0 = siempre se liquida.
ALTER TABLE politicas_tienda
    ADD COLUMN diferencia_minima_liquidable numeric(12,2) NOT NULL DEFAULT 0.00
        CHECK (diferencia_minima_liquidable >= 0);

-- La pasarela devuelve (reembolso) y cobra (cobro). Lo anterior eran reembolsos.
ALTER TABLE pasarela_movimientos
    ADD COLUMN tipo text NOT NULL DEFAULT 'reembolso' CHECK (tipo IN ('reembolso', 'cobro'));

-- Sustituciones: en qué línea, a qué precio pagado, cómo se liquidó la diferencia.
-- 'pendiente_cobro': más cara, esperando a que la pasarela confirme el cobro (el stock
-- no se ha movido). 'anulada': se cobró pero al completar ya no había stock; el cobro
-- se devuelve con un reembolso de concepto 'anulacion'.
ALTER TABLE sustituciones DROP CONSTRAINT sustituciones_estado_check;
ALTER TABLE sustituciones
    ADD CONSTRAINT sustituciones_estado_check
        CHECK (estado IN ('hecha', 'pendiente_cobro', 'anulada')),
    ADD COLUMN linea integer,
    ADD COLUMN precio_pagado numeric(12,2) CHECK (precio_pagado >= 0),
    ADD COLUMN liquidacion text NOT NULL DEFAULT 'anterior_al_libro'
        CHECK (liquidacion IN ('ninguna', 'reembolso', 'cobro', 'renunciada', 'anterior_al_libro')),
    ADD COLUMN completada_en timestamptz;

-- Reembolsos: además de las devoluciones, la diferencia a favor de un cambio y la
-- devolución del cobro de un cambio anulado. Y la bandeja de salida (outbox): intentos,
-- próximo intento, último error, marca para una persona y aviso al cliente.
ALTER TABLE reembolsos
    ADD COLUMN concepto text NOT NULL DEFAULT 'devolucion'
        CHECK (concepto IN ('devolucion', 'diferencia', 'anulacion')),
    ADD COLUMN sustitucion_id bigint REFERENCES sustituciones(id),
    ADD COLUMN intentos integer NOT NULL DEFAULT 0 CHECK (intentos >= 0),
    ADD COLUMN proximo_intento timestamptz NOT NULL DEFAULT now(),
    ADD COLUMN ultimo_error text,
    ADD COLUMN requiere_persona boolean NOT NULL DEFAULT false,
    ADD COLUMN marcado_en timestamptz,
    ADD COLUMN avisar boolean NOT NULL DEFAULT false,
    ADD COLUMN avisado_en timestamptz,
    ADD CONSTRAINT reembolsos_concepto_sustitucion
        CHECK ((concepto = 'devolucion') = (sustitucion_id IS NULL));
CREATE UNIQUE INDEX reembolsos_sustitucion_concepto_idx
    ON reembolsos (sustitucion_id, concepto) WHERE sustitucion_id IS NOT NULL;
CREATE INDEX reembolsos_bandeja_idx ON reembolsos (proximo_intento) WHERE estado = 'pendiente';
-- Lo que el sistema completó y aún no se ha contado al cliente (herramientas/avisos.py).
CREATE INDEX reembolsos_avisos_idx ON reembolsos (emitido_en) WHERE avisar AND avisado_en IS NULL;

-- Cobros de la diferencia de un cambio más caro: uno por sustitución como mucho.
CREATE TABLE cobros (
    id                  bigserial PRIMARY KEY,
    numero              text GENERATED ALWAYS AS ('CO-' || lpad(id::text, 6, '0')) STORED,
    clave_idempotencia  text NOT NULL UNIQUE,
    sustitucion_id      bigint NOT NULL UNIQUE REFERENCES sustituciones(id),
    thread_id           text NOT NULL,
    tool_call_id        text NOT NULL,
    pedido_id           text NOT NULL REFERENCES pedidos(id),
    cliente_id          text NOT NULL REFERENCES clientes(id),
    tienda              text NOT NULL REFERENCES tiendas(id),
    importe             numeric(12,2) NOT NULL CHECK (importe > 0),
    estado              text NOT NULL DEFAULT 'pendiente' CHECK (estado IN ('pendiente', 'confirmado')),
    trace_id            text,
    creado              timestamptz NOT NULL DEFAULT now(),
    confirmado_en       timestamptz,
    intentos            integer NOT NULL DEFAULT 0 CHECK (intentos >= 0),
    proximo_intento     timestamptz NOT NULL DEFAULT now(),
    ultimo_error        text,
    requiere_persona    boolean NOT NULL DEFAULT false,
    marcado_en          timestamptz,
    avisar              boolean NOT NULL DEFAULT false,
    avisado_en          timestamptz
);
CREATE INDEX cobros_bandeja_idx ON cobros (proximo_intento) WHERE estado = 'pendiente';
CREATE INDEX cobros_pedido_idx ON cobros (pedido_id);
CREATE INDEX cobros_avisos_idx ON cobros (confirmado_en) WHERE avisar AND avisado_en IS NULL;

-- El libro: una fila por unidad compensada. La clave primaria hace que una unidad no se
-- compense dos veces (ni dos reembolsos, ni reembolso y cambio), también entre dos
-- transacciones a la vez; el disparador, que no pase de su precio ni de las unidades
-- de la línea.
CREATE TABLE compensaciones_unidad (
    pedido_id       text NOT NULL,
    linea           integer NOT NULL,
    unidad          integer NOT NULL CHECK (unidad >= 1),
    reembolso_id    bigint REFERENCES reembolsos(id),
    sustitucion_id  bigint REFERENCES sustituciones(id),
    importe         numeric(12,2) NOT NULL CHECK (importe >= 0),
    creada          timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (pedido_id, linea, unidad),
    FOREIGN KEY (pedido_id, linea) REFERENCES lineas_pedido (pedido_id, linea),
    CHECK (num_nonnulls(reembolso_id, sustitucion_id) = 1)
);
CREATE INDEX compensaciones_reembolso_idx ON compensaciones_unidad (reembolso_id)
    WHERE reembolso_id IS NOT NULL;
-- Un cambio consume exactamente una unidad.
CREATE UNIQUE INDEX compensaciones_sustitucion_idx ON compensaciones_unidad (sustitucion_id)
    WHERE sustitucion_id IS NOT NULL;

CREATE FUNCTION comprobar_compensacion_unidad() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    l lineas_pedido%ROWTYPE;
BEGIN
    SELECT * INTO l FROM lineas_pedido WHERE pedido_id = NEW.pedido_id AND linea = NEW.linea;
    IF NEW.unidad > l.unidades THEN
        RAISE EXCEPTION 'la línea % del pedido % tiene % unidades: no existe la unidad %',
            NEW.linea, NEW.pedido_id, l.unidades, NEW.unidad
            USING ERRCODE = 'check_violation';
    END IF;
    IF NEW.importe > l.precio_unitario THEN
        RAISE EXCEPTION 'compensación de % por una unidad de la línea % del pedido % que costó %',
            NEW.importe, NEW.linea, NEW.pedido_id, l.precio_unitario
            USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER compensaciones_unidad_comprobar
    BEFORE INSERT OR UPDATE ON compensaciones_unidad
    FOR EACH ROW EXECUTE FUNCTION comprobar_compensacion_unidad();

-- Compensaciones de antes del libro que no caben en él (p. ej. un reembolso completo y
-- después un cambio de la misma unidad): quedan a la vista de la auditoría.
CREATE TABLE compensaciones_sin_unidad (
    id              bigserial PRIMARY KEY,
    reembolso_id    bigint REFERENCES reembolsos(id),
    sustitucion_id  bigint REFERENCES sustituciones(id),
    importe         numeric(12,2) NOT NULL CHECK (importe > 0),
    motivo          text NOT NULL,
    creada          timestamptz NOT NULL DEFAULT now(),
    CHECK (num_nonnulls(reembolso_id, sustitucion_id) = 1)
);

-- Migración de los datos anteriores: en orden de creación, cada reembolso ocupa las
-- unidades libres de sus líneas (o del pedido) por orden de línea y unidad, cada una
-- hasta su precio; cada cambio, la primera unidad libre de su SKU.
UPDATE sustituciones s
SET precio_pagado = coalesce(
        (SELECT l.precio_unitario FROM lineas_pedido l
          WHERE l.pedido_id = s.pedido_id AND l.sku = s.sku_original
          ORDER BY l.linea LIMIT 1),
        s.pvp_original),
    completada_en = s.creada;

DO $$
DECLARE
    e record;
    u record;
    restante numeric(12,2);
    parte numeric(12,2);
BEGIN
    FOR e IN
        SELECT 'reembolso' AS tipo, r.id, r.pedido_id, r.importe, r.lineas, NULL::text AS sku,
               r.creado AS cuando
        FROM reembolsos r
        UNION ALL
        SELECT 'sustitucion', s.id, s.pedido_id, s.precio_pagado, NULL, s.sku_original, s.creada
        FROM sustituciones s
        ORDER BY cuando, tipo, id
    LOOP
        IF e.tipo = 'reembolso' THEN
            restante := e.importe;
            FOR u IN
                SELECT l.linea, g.unidad, l.precio_unitario
                FROM lineas_pedido l
                CROSS JOIN LATERAL generate_series(1, l.unidades) AS g(unidad)
                WHERE l.pedido_id = e.pedido_id AND l.precio_unitario > 0
                  AND (e.lineas IS NULL OR jsonb_typeof(e.lineas) <> 'array'
                       OR jsonb_array_length(e.lineas) = 0
                       OR l.linea::text IN (SELECT jsonb_array_elements_text(e.lineas)))
                  AND NOT EXISTS (SELECT 1 FROM compensaciones_unidad c
                                  WHERE c.pedido_id = l.pedido_id AND c.linea = l.linea
                                    AND c.unidad = g.unidad)
                ORDER BY l.linea, g.unidad
            LOOP
                EXIT WHEN restante <= 0;
                parte := least(restante, u.precio_unitario);
                INSERT INTO compensaciones_unidad (pedido_id, linea, unidad, reembolso_id, importe)
                VALUES (e.pedido_id, u.linea, u.unidad, e.id, parte);
                restante := restante - parte;
            END LOOP;
            IF restante > 0 THEN
                INSERT INTO compensaciones_sin_unidad (reembolso_id, importe, motivo)
                VALUES (e.id, restante, 'reembolso anterior al libro sin unidades libres que lo cubran');
            END IF;
        ELSE
            SELECT l.linea, g.unidad, l.precio_unitario INTO u
            FROM lineas_pedido l
            CROSS JOIN LATERAL generate_series(1, l.unidades) AS g(unidad)
            WHERE l.pedido_id = e.pedido_id AND l.sku = e.sku
              AND NOT EXISTS (SELECT 1 FROM compensaciones_unidad c
                              WHERE c.pedido_id = l.pedido_id AND c.linea = l.linea
                                AND c.unidad = g.unidad)
            ORDER BY l.linea, g.unidad
            LIMIT 1;
            IF FOUND THEN
                INSERT INTO compensaciones_unidad (pedido_id, linea, unidad, sustitucion_id, importe)
                VALUES (e.pedido_id, u.linea, u.unidad, e.id, u.precio_unitario);
                UPDATE sustituciones SET linea = u.linea WHERE id = e.id;
            ELSIF e.importe > 0 THEN
                INSERT INTO compensaciones_sin_unidad (sustitucion_id, importe, motivo)
                VALUES (e.id, e.importe, 'cambio anterior al libro de una unidad ya compensada');
            END IF;
        END IF;
    END LOOP;
END
$$;

ALTER TABLE sustituciones ALTER COLUMN precio_pagado SET NOT NULL;
-- Las filas nuevas dicen siempre cómo se liquidan; 'anterior_al_libro' es solo la marca
-- de las migradas (su diferencia nunca se liquidó: la auditoría las enseña).
ALTER TABLE sustituciones ALTER COLUMN liquidacion DROP DEFAULT;
-- La diferencia es sobre lo que el cliente pagó por la unidad, no sobre el pvp de hoy:
-- así lo devuelto por un cambio nunca supera lo pagado.
ALTER TABLE sustituciones DROP COLUMN diferencia;
ALTER TABLE sustituciones
    ADD COLUMN diferencia numeric(12,2) GENERATED ALWAYS AS (pvp_nuevo - precio_pagado) STORED;

-- Lo compensado y lo que queda por línea: la única definición de «reembolsable».
-- Una unidad libre vale su precio; una compensada (aunque sea en parte) ya no cuenta.
CREATE VIEW libro_lineas AS
SELECT l.pedido_id, l.linea, l.sku, l.unidades, l.precio_unitario, l.importe AS pagado,
       coalesce(sum(c.importe) FILTER (WHERE c.reembolso_id IS NOT NULL), 0)::numeric(12,2)
           AS reembolsado,
       count(c.reembolso_id)::int AS unidades_reembolsadas,
       count(c.sustitucion_id)::int AS unidades_cambiadas,
       coalesce(sum(c.importe) FILTER (WHERE c.sustitucion_id IS NOT NULL), 0)::numeric(12,2)
           AS valor_cambiado,
       (l.unidades - count(c.unidad))::int AS unidades_libres,
       ((l.unidades - count(c.unidad)) * l.precio_unitario)::numeric(12,2) AS reembolsable
FROM lineas_pedido l
LEFT JOIN compensaciones_unidad c ON c.pedido_id = l.pedido_id AND c.linea = l.linea
GROUP BY l.pedido_id, l.linea;

-- Los hechos de elegibilidad de una devolución o un cambio, en un solo sitio (las
-- herramientas y la política los leen de aquí). La ventana es
-- politicas_tienda.dias_desde_entrega (30 si la tienda no tiene fila, como su DEFAULT).
CREATE VIEW elegibilidad_pedidos AS
SELECT p.id AS pedido_id, p.cliente_id, p.tienda, p.estado,
       p.estado = 'entregado' AS entregado,
       p.entregado_en,
       floor(extract(epoch FROM now() - p.entregado_en) / 86400)::int AS dias_desde_entrega,
       coalesce(pt.dias_desde_entrega, 30) AS ventana_dias,
       coalesce(floor(extract(epoch FROM now() - p.entregado_en) / 86400)::int
                <= coalesce(pt.dias_desde_entrega, 30), false) AS dentro_de_ventana,
       (SELECT count(*) FROM reembolsos r
         WHERE r.pedido_id = p.id AND r.concepto = 'devolucion')::int AS reembolsos,
       (SELECT count(*) FROM sustituciones s
         WHERE s.pedido_id = p.id AND s.estado <> 'anulada')::int AS sustituciones,
       EXISTS (SELECT 1 FROM compensaciones_unidad c WHERE c.pedido_id = p.id)
           OR EXISTS (SELECT 1 FROM reembolsos r WHERE r.pedido_id = p.id)
           OR EXISTS (SELECT 1 FROM sustituciones s
                       WHERE s.pedido_id = p.id AND s.estado <> 'anulada') AS compensado,
       coalesce((SELECT sum(ll.unidades_libres) FROM libro_lineas ll
                  WHERE ll.pedido_id = p.id), 0)::int AS unidades_libres,
       coalesce((SELECT sum(ll.reembolsable) FROM libro_lineas ll
                  WHERE ll.pedido_id = p.id), 0)::numeric(12,2) AS reembolsable
FROM pedidos p
LEFT JOIN politicas_tienda pt ON pt.tienda = p.tienda;

-- Los asientos que mueven dinero por la pasarela, reembolsos y cobros, con la misma
-- forma: lo que la bandeja de salida completa y lo que la auditoría cruza con la pasarela.
CREATE VIEW libro_movimientos AS
SELECT 'reembolso'::text AS tipo, r.id, r.numero AS referencia, r.importe, r.estado,
       r.estado = 'emitido' AS completado, r.concepto, r.sustitucion_id, r.thread_id,
       r.tool_call_id, r.pedido_id, r.cliente_id, r.tienda, r.intentos, r.proximo_intento,
       r.ultimo_error, r.requiere_persona, r.marcado_en, r.avisar, r.avisado_en, r.creado,
       r.emitido_en AS completado_en
FROM reembolsos r
UNION ALL
SELECT 'cobro', c.id, c.numero, c.importe, c.estado, c.estado = 'confirmado', 'diferencia',
       c.sustitucion_id, c.thread_id, c.tool_call_id, c.pedido_id, c.cliente_id, c.tienda,
       c.intentos, c.proximo_intento, c.ultimo_error, c.requiere_persona, c.marcado_en,
       c.avisar, c.avisado_en, c.creado, c.confirmado_en
FROM cobros c;
