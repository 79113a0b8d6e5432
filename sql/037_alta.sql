-- Alta sin SQL (issue 43, punto 1): regiones, los datos de cada tienda, el administrador y
-- el registro de cada cambio de alta (quién, qué, antes y después).
--
-- Las tiendas donde firma un regional siguen en tiendas_regionales (firmantes_tienda, la
-- auditoría y el disparador de sql/014 las leen de ahí): el servicio de alta
-- (agente/servicio/alta/) las rehace con las tiendas activas de su región cada vez que
-- cambia una tienda, una región o la persona. Un regional sin región (los de antes de esta
-- migración) conserva las suyas.

CREATE TABLE regiones (
    id      text PRIMARY KEY CHECK (id ~ '^[a-z0-9][a-z0-9-]*$'),
    nombre  text NOT NULL CHECK (length(nombre) BETWEEN 1 AND 100),
    activa  boolean NOT NULL DEFAULT true,
    creada  timestamptz NOT NULL DEFAULT now()
);

-- La zona horaria de la tienda ya vive en avisos_tienda.zona_horaria (sql/008).
ALTER TABLE tiendas
    ADD COLUMN region         text REFERENCES regiones(id),
    ADD COLUMN activa         boolean NOT NULL DEFAULT true,
    ADD COLUMN calle          text CHECK (length(calle) BETWEEN 1 AND 200),
    ADD COLUMN codigo_postal  text CHECK (codigo_postal ~ '^(0[1-9]|[1-4][0-9]|5[0-2])[0-9]{3}$'),
    ADD COLUMN localidad      text CHECK (length(localidad) BETWEEN 1 AND 100),
    ADD COLUMN provincia      text;
CREATE INDEX tiendas_region_idx ON tiendas (region);

-- Un regional gestiona (y firma en) las tiendas de su región; un administrador gestiona
-- todo el alta. Ni el uno ni el otro necesitan una tienda propia (el primer administrador
-- nace en una base sin tiendas).
ALTER TABLE encargados
    ADD COLUMN region         text REFERENCES regiones(id),
    ADD COLUMN administrador  boolean NOT NULL DEFAULT false,
    ALTER COLUMN tienda DROP NOT NULL,
    ADD CONSTRAINT encargados_tienda_o_region
        CHECK (tienda IS NOT NULL OR rol = 'regional' OR administrador);

-- Quien no tiene tienda propia no firma «en su tienda».
CREATE OR REPLACE VIEW firmantes_tienda AS
SELECT e.id AS encargado_id, e.tienda, e.rol, e.nombre
FROM encargados e
WHERE e.activo AND e.tienda IS NOT NULL
UNION
SELECT e.id, r.tienda, e.rol, e.nombre
FROM tiendas_regionales r
JOIN encargados e ON e.id = r.encargado_id
WHERE e.activo AND e.rol = 'regional';

-- Cada cambio de alta, con quién lo hizo y por dónde; no se modifica ni se borra.
CREATE TABLE cambios_alta (
    id         bigserial PRIMARY KEY,
    quien      text NOT NULL CHECK (quien <> ''),
    canal      text NOT NULL CHECK (canal IN ('web', 'cli', 'operador')),
    objeto     text NOT NULL CHECK (objeto IN ('tienda', 'region', 'persona')),
    objeto_id  text NOT NULL,
    accion     text NOT NULL CHECK (accion IN ('crear', 'editar', 'desactivar', 'primera')),
    antes      jsonb,
    despues    jsonb,
    creado     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX cambios_alta_objeto_idx ON cambios_alta (objeto, objeto_id, creado);

CREATE FUNCTION cambios_alta_inmutables() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'el registro de cambios de alta no se modifica ni se borra';
END
$$;
CREATE TRIGGER cambios_alta_inmutables BEFORE UPDATE OR DELETE ON cambios_alta
    FOR EACH ROW EXECUTE FUNCTION cambios_alta_inmutables();
