-- La versión de la política de cada tienda y, con cada veredicto, la autoridad que exige
-- (importe, firmas, rol mínimo) y la versión de la política que lo decidió.

-- Sube sola cuando cambia cualquier umbral de la fila (salvo que el UPDATE fije la
-- versión): un veredicto guardado dice con qué reglas de su tienda se decidió.
ALTER TABLE politicas_tienda
    ADD COLUMN version integer NOT NULL DEFAULT 1 CHECK (version > 0);

CREATE FUNCTION politicas_tienda_nueva_version() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.version = OLD.version AND (to_jsonb(NEW) - 'version') <> (to_jsonb(OLD) - 'version') THEN
        NEW.version := OLD.version + 1;
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER politicas_tienda_version
    BEFORE UPDATE ON politicas_tienda
    FOR EACH ROW EXECUTE FUNCTION politicas_tienda_nueva_version();

-- Autoridad: NULL si el veredicto no pide firma. Los veredictos guardados antes de esta
-- migración que pedían firma se leen como «una firma de encargado, importe sin fijar»
-- (la única autoridad que existía); no se reescriben.
ALTER TABLE evaluaciones_politica
    ADD COLUMN version_politica   integer NOT NULL DEFAULT 1 CHECK (version_politica > 0),
    ADD COLUMN autoridad_importe  numeric(12,2) CHECK (autoridad_importe > 0),
    ADD COLUMN autoridad_firmas   integer CHECK (autoridad_firmas > 0),
    ADD COLUMN autoridad_rol      text CHECK (autoridad_rol <> ''),
    ADD CONSTRAINT evaluaciones_autoridad_solo_con_firma
        CHECK (requiere_encargado OR (autoridad_importe IS NULL AND autoridad_firmas IS NULL
                                      AND autoridad_rol IS NULL));
