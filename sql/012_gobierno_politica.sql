-- Gobierno de la política: cada versión de los umbrales queda en su historia (la escriba
-- quien la escriba), cada valor tiene dominio, los cambios que amplían esperan la firma de
-- alguien por encima del autor (solicitudes_politica), y lo que decide dinero se fija al
-- pausar (evaluaciones_politica.valores).

-- 1. Historia completa: cada versión de politicas_tienda deja su fila en
-- politicas_tienda_versiones, también si alguien escribe la tabla a mano. Quién, por qué y
-- quién firmó llegan en ajustes locales de la transacción (set_config(..., true)); sin
-- ellos la versión queda «sin autor» y la auditoría la enseña si amplía.
ALTER TABLE politicas_tienda_versiones
    ADD COLUMN firmada_por   text,
    ADD COLUMN solicitud_id  bigint;

CREATE FUNCTION politicas_tienda_registrar_version() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO politicas_tienda_versiones
        (tienda, version, umbrales, creada_por, motivo, firmada_por, solicitud_id)
    VALUES (
        NEW.tienda, NEW.version,
        -- El dinero como texto ("60.00"), como lo escribe la aplicación.
        (SELECT jsonb_object_agg(e.key, CASE WHEN jsonb_typeof(e.value) = 'number'
                                              AND e.value::text LIKE '%.%'
                                         THEN to_jsonb(e.value #>> '{}') ELSE e.value END)
         FROM jsonb_each(to_jsonb(NEW) - 'tienda' - 'version') AS e),
        coalesce(nullif(current_setting('agente.autor', true), ''), 'sin autor'),
        nullif(current_setting('agente.motivo', true), ''),
        nullif(current_setting('agente.firmada_por', true), ''),
        nullif(current_setting('agente.solicitud', true), '')::bigint)
    ON CONFLICT (tienda, version) DO NOTHING;
    RETURN NULL;
END
$$;

-- Después del trigger que sube la versión (BEFORE UPDATE, sql/006).
CREATE TRIGGER politicas_tienda_historia
    AFTER INSERT OR UPDATE ON politicas_tienda
    FOR EACH ROW EXECUTE FUNCTION politicas_tienda_registrar_version();

-- Las versiones vigentes de antes de esta migración que no tenían fila.
INSERT INTO politicas_tienda_versiones (tienda, version, umbrales, creada_por, motivo)
SELECT p.tienda, p.version,
       (SELECT jsonb_object_agg(e.key, CASE WHEN jsonb_typeof(e.value) = 'number'
                                             AND e.value::text LIKE '%.%'
                                        THEN to_jsonb(e.value #>> '{}') ELSE e.value END)
        FROM jsonb_each(to_jsonb(p) - 'tienda' - 'version') AS e),
       'sistema', 'vigente al llegar el gobierno de la política (sql/012)'
FROM politicas_tienda p
ON CONFLICT (tienda, version) DO NOTHING;

-- 2. Dominios (los mismos que politicas/valores.py; lo comprueba una prueba). Lo que
-- quedó fuera de rango con versiones anteriores se lleva al borde, como versión nueva.
SELECT set_config('agente.autor', 'sistema', true),
       set_config('agente.motivo', 'valores fuera de su dominio llevados al borde (sql/012)', true);
-- Por columna y solo si existe: diferencia_minima_liquidable llega con sql/007, que una base
-- antigua puede aplicar después de esta.
DO $$
DECLARE
    dominio record;
BEGIN
    FOR dominio IN SELECT * FROM (VALUES
            ('limite_reembolso', 0, 1000000), ('devoluciones_max_30d', 1, 100),
            ('ventana_devoluciones_dias', 1, 365), ('dias_desde_entrega', 0, 365),
            ('diferencia_max_sustitucion', 0, 1000000), ('diferencia_minima_liquidable', 0, 1000000),
            ('horas_caducidad', 1, 720)) AS d(columna, minimo, maximo)
    LOOP
        CONTINUE WHEN NOT EXISTS (SELECT 1 FROM information_schema.columns
                                  WHERE table_name = 'politicas_tienda' AND column_name = dominio.columna);
        EXECUTE format('UPDATE politicas_tienda SET %1$I = least(greatest(%1$I, %2$s), %3$s) '
                       'WHERE %1$I NOT BETWEEN %2$s AND %3$s', dominio.columna, dominio.minimo, dominio.maximo);
        EXECUTE format('ALTER TABLE politicas_tienda ADD CONSTRAINT %I CHECK (%I BETWEEN %s AND %s)',
                       'politicas_tienda_dominio_' || dominio.columna, dominio.columna,
                       dominio.minimo, dominio.maximo);
    END LOOP;
END
$$;
SELECT set_config('agente.autor', '', true), set_config('agente.motivo', '', true);

-- Las versiones de la matriz no se tocan (trigger): el dominio vale para las nuevas.
ALTER TABLE limites_autoridad
    ADD CONSTRAINT limites_autoridad_dominio CHECK (limite <= 1000000) NOT VALID;
ALTER TABLE reglas_autoridad
    ADD CONSTRAINT reglas_autoridad_dominio CHECK (dos_firmas_por_encima <= 1000000) NOT VALID;

-- 3. Solicitudes de cambio: un cambio que amplía espera aquí la firma de alguien por
-- encima de su autor. diferencias: cada valor antes -> después, en español.
CREATE TABLE solicitudes_politica (
    id               bigserial PRIMARY KEY,
    tienda           text NOT NULL REFERENCES tiendas(id),
    autor            text NOT NULL REFERENCES encargados(id),
    autor_rol        text NOT NULL REFERENCES roles_firma(rol),
    cambio           jsonb NOT NULL,
    diferencias      jsonb NOT NULL,
    motivo           text CHECK (length(motivo) <= 500),
    estado           text NOT NULL DEFAULT 'pendiente'
                     CHECK (estado IN ('pendiente', 'aplicada', 'rechazada', 'caducada')),
    creada           timestamptz NOT NULL DEFAULT now(),
    caduca           timestamptz NOT NULL,
    decidida         timestamptz,
    decidida_por     text REFERENCES encargados(id),
    decidida_rol     text REFERENCES roles_firma(rol),
    motivo_decision  text CHECK (length(motivo_decision) <= 500),
    version_umbrales integer,
    matriz_id        bigint REFERENCES matrices_autoridad(id),
    CHECK (caduca > creada AND caduca <= creada + interval '720 hours'),
    CHECK ((estado = 'pendiente') = (decidida IS NULL)),
    CHECK (decidida_por IS NULL OR decidida_por <> autor)
);
CREATE INDEX solicitudes_politica_pendientes_idx ON solicitudes_politica (tienda, creada)
    WHERE estado = 'pendiente';

ALTER TABLE matrices_autoridad
    ADD COLUMN firmada_por   text,
    ADD COLUMN solicitud_id  bigint REFERENCES solicitudes_politica(id);
ALTER TABLE politicas_tienda_versiones
    ADD CONSTRAINT politicas_tienda_versiones_solicitud_fk
        FOREIGN KEY (solicitud_id) REFERENCES solicitudes_politica(id);

-- Avisos a quien puede firmar una solicitud, por la misma bandeja de salida.
ALTER TABLE avisos_salida DROP CONSTRAINT avisos_salida_tipo_check;
ALTER TABLE avisos_salida ADD CONSTRAINT avisos_salida_tipo_check
    CHECK (tipo IN ('pendiente', 'escalado', 'cambio_politica'));

-- 4. Lo que decide dinero se fija al pausar: los valores de la política con los que se
-- dio el veredicto (con su versión), y los que usó de verdad cada efecto al ejecutarse.
ALTER TABLE evaluaciones_politica ADD COLUMN valores jsonb;
ALTER TABLE sustituciones ADD COLUMN valores_politica jsonb;

-- 5. Plazos fuera de rango que dejaron versiones anteriores (horas_caducidad sin dominio):
-- como mucho 720 horas desde que se pausó.
UPDATE aprobaciones_pendientes SET caduca = creada + interval '720 hours'
WHERE caduca > creada + interval '720 hours';
