-- Autoridad escalonada: roles de quien firma, la matriz de autoridad versionada, los
-- contactos de cada firmante, el horario de avisos de cada tienda y la bandeja de salida
-- de avisos (outbox).

-- Roles, del menor al mayor nivel. El nivel ordena el escalado («el siguiente nivel»).
CREATE TABLE roles_firma (
    rol     text PRIMARY KEY CHECK (rol ~ '^[a-z]+$'),
    nivel   integer NOT NULL UNIQUE CHECK (nivel > 0),
    nombre  text NOT NULL
);
INSERT INTO roles_firma (rol, nivel, nombre) VALUES
    ('encargado', 1, 'encargado'),
    ('gerente', 2, 'gerente'),
    ('regional', 3, 'regional');

-- encargado y gerente firman en su tienda (encargados.tienda); un regional, además, en
-- las tiendas de tiendas_regionales.
ALTER TABLE encargados
    ADD COLUMN rol text NOT NULL DEFAULT 'encargado' REFERENCES roles_firma(rol);

CREATE TABLE tiendas_regionales (
    encargado_id  text NOT NULL REFERENCES encargados(id) ON DELETE CASCADE,
    tienda        text NOT NULL REFERENCES tiendas(id) ON DELETE CASCADE,
    PRIMARY KEY (encargado_id, tienda)
);
CREATE INDEX tiendas_regionales_tienda_idx ON tiendas_regionales (tienda);

-- Quién puede firmar en qué tienda, y con qué rol: activos, su tienda y, si son
-- regionales, las de su región (una fila de tiendas_regionales de alguien que no es
-- regional no cuenta).
CREATE VIEW firmantes_tienda AS
SELECT e.id AS encargado_id, e.tienda, e.rol, e.nombre
FROM encargados e
WHERE e.activo
UNION
SELECT e.id, r.tienda, e.rol, e.nombre
FROM tiendas_regionales r
JOIN encargados e ON e.id = r.encargado_id
WHERE e.activo AND e.rol = 'regional';

-- Matriz de autoridad: cada cambio es una versión nueva (quién y cuándo); nunca se
-- reescribe. tienda NULL = la matriz por defecto, la de toda tienda sin matriz propia.
CREATE TABLE matrices_autoridad (
    id          bigserial PRIMARY KEY,
    tienda      text REFERENCES tiendas(id),
    version     integer NOT NULL CHECK (version > 0),
    creada      timestamptz NOT NULL DEFAULT now(),
    creada_por  text NOT NULL CHECK (creada_por <> ''),
    motivo      text,
    UNIQUE NULLS NOT DISTINCT (tienda, version)
);

-- Por regla de la matriz (la `regla` del registro de herramientas: reembolso,
-- sustitucion): por encima de qué importe hacen falta dos firmas de dos personas
-- distintas (NULL = nunca).
CREATE TABLE reglas_autoridad (
    matriz_id              bigint NOT NULL REFERENCES matrices_autoridad(id),
    regla                  text NOT NULL CHECK (regla ~ '^[a-z_]+$'),
    dos_firmas_por_encima  numeric(12,2) CHECK (dos_firmas_por_encima >= 0),
    PRIMARY KEY (matriz_id, regla)
);

-- Hasta qué importe firma cada rol en cada regla (NULL = sin límite). Un rol sin fila
-- en una regla no firma esa regla.
CREATE TABLE limites_autoridad (
    matriz_id  bigint NOT NULL,
    regla      text NOT NULL,
    rol        text NOT NULL REFERENCES roles_firma(rol),
    limite     numeric(12,2) CHECK (limite >= 0),
    PRIMARY KEY (matriz_id, regla, rol),
    FOREIGN KEY (matriz_id, regla) REFERENCES reglas_autoridad(matriz_id, regla)
);

-- Una versión de la matriz no se modifica ni se borra: un veredicto que la usó debe
-- poder leerla igual siempre.
CREATE FUNCTION autoridad_inmutable() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'las versiones de la matriz de autoridad no se modifican: crea una versión nueva';
END
$$;
CREATE TRIGGER matrices_autoridad_inmutables BEFORE UPDATE OR DELETE ON matrices_autoridad
    FOR EACH ROW EXECUTE FUNCTION autoridad_inmutable();
CREATE TRIGGER reglas_autoridad_inmutables BEFORE UPDATE OR DELETE ON reglas_autoridad
    FOR EACH ROW EXECUTE FUNCTION autoridad_inmutable();
CREATE TRIGGER limites_autoridad_inmutables BEFORE UPDATE OR DELETE ON limites_autoridad
    FOR EACH ROW EXECUTE FUNCTION autoridad_inmutable();

-- La matriz por defecto, versión 1: encargado hasta 300,00 EUR, gerente hasta
-- 1.000,00 EUR, regional sin límite; por encima de 500,00 EUR, dos personas distintas.
WITH matriz AS (
    INSERT INTO matrices_autoridad (tienda, version, creada_por, motivo)
    VALUES (NULL, 1, 'sistema', 'valores por defecto (sql/008_autoridad.sql)')
    RETURNING id
), reglas AS (
    INSERT INTO reglas_autoridad (matriz_id, regla, dos_firmas_por_encima)
    SELECT matriz.id, r.regla, 500.00
    FROM matriz, (VALUES ('reembolso'), ('sustitucion')) AS r(regla)
    RETURNING matriz_id, regla
)
INSERT INTO limites_autoridad (matriz_id, regla, rol, limite)
SELECT reglas.matriz_id, reglas.regla, l.rol, l.limite
FROM reglas, (VALUES ('encargado', 300.00), ('gerente', 1000.00), ('regional', NULL::numeric))
     AS l(rol, limite);

-- Contactos de cada firmante: canal y dirección (un correo, la URL de un webhook, la
-- de un webhook compatible con Slack o una URL de Apprise). baja <> NULL: no quiere
-- avisos por ahí (se respeta al encolar).
CREATE TABLE contactos_firmantes (
    id            bigserial PRIMARY KEY,
    encargado_id  text NOT NULL REFERENCES encargados(id) ON DELETE CASCADE,
    canal         text NOT NULL CHECK (canal IN ('email', 'webhook', 'slack', 'apprise')),
    direccion     text NOT NULL CHECK (direccion <> ''),
    baja          timestamptz,
    creado        timestamptz NOT NULL DEFAULT now(),
    UNIQUE (encargado_id, canal, direccion)
);
CREATE INDEX contactos_firmantes_activos_idx ON contactos_firmantes (encargado_id) WHERE baja IS NULL;

-- Avisos de cada tienda: horario (fuera de él solo salen los urgentes; el resto espera a
-- la apertura), minutos de espera en horario antes de avisar al siguiente nivel, desde
-- qué importe un aviso es urgente (NULL = nunca) y el secreto con el que se firman sus
-- webhooks (HMAC-SHA256).
CREATE TABLE avisos_tienda (
    tienda            text PRIMARY KEY REFERENCES tiendas(id) ON DELETE CASCADE,
    -- Una zona que PostgreSQL no conoce hace fallar la comprobación (y la escritura).
    zona_horaria      text NOT NULL DEFAULT 'Europe/Madrid'
                      CHECK ((TIMESTAMPTZ '2000-01-01 00:00+00' AT TIME ZONE zona_horaria) IS NOT NULL),
    abre              time NOT NULL DEFAULT '09:00',
    cierra            time NOT NULL DEFAULT '21:00',
    dias              integer[] NOT NULL DEFAULT '{1,2,3,4,5,6}'
                      CHECK (dias <@ '{1,2,3,4,5,6,7}' AND cardinality(dias) > 0),
    escalado_minutos  integer NOT NULL DEFAULT 30 CHECK (escalado_minutos > 0),
    urgente_desde     numeric(12,2) CHECK (urgente_desde > 0),
    secreto_webhook   text NOT NULL DEFAULT encode(
                          sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text, 'UTF8')),
                          'hex') CHECK (length(secreto_webhook) >= 32),
    CHECK (abre < cierra)
);
INSERT INTO avisos_tienda (tienda) SELECT id FROM tiendas;

CREATE FUNCTION avisos_tienda_por_defecto() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO avisos_tienda (tienda) VALUES (NEW.id) ON CONFLICT (tienda) DO NOTHING;
    RETURN NEW;
END
$$;
CREATE TRIGGER tiendas_avisos AFTER INSERT ON tiendas
    FOR EACH ROW EXECUTE FUNCTION avisos_tienda_por_defecto();

-- Lo que se avisó de cada pausa: la autoridad que exige (fijada al pausar), el último
-- nivel avisado y cuántos escalados lleva. agotado: no queda nivel por encima.
CREATE TABLE avisos_aprobacion (
    thread_id     text NOT NULL,
    interrupt_id  text NOT NULL,
    tienda        text NOT NULL REFERENCES tiendas(id),
    regla         text,
    importe       numeric(12,2),
    firmas        integer NOT NULL CHECK (firmas > 0),
    rol_minimo    text NOT NULL REFERENCES roles_firma(rol),
    matriz_id     bigint REFERENCES matrices_autoridad(id),
    datos         jsonb NOT NULL,
    urgente       boolean NOT NULL DEFAULT false,
    oleada        integer NOT NULL DEFAULT 0 CHECK (oleada >= 0),
    escalados     integer NOT NULL DEFAULT 0 CHECK (escalados >= 0),
    agotado       boolean NOT NULL DEFAULT false,
    creado        timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (thread_id, interrupt_id)
);
CREATE INDEX avisos_aprobacion_vivos_idx ON avisos_aprobacion (creado) WHERE NOT agotado;

-- Bandeja de salida: un aviso por (pausa, destinatario, canal, dirección, tipo, paso),
-- con clave determinista (encolar dos veces deja uno). Entrega al menos una vez: quien
-- recibe deduplica por la clave (cabecera X-Agente-Aviso-Id).
CREATE TABLE avisos_salida (
    id               bigserial PRIMARY KEY,
    clave            text NOT NULL UNIQUE,
    thread_id        text,
    interrupt_id     text,
    tienda           text NOT NULL REFERENCES tiendas(id),
    encargado_id     text NOT NULL REFERENCES encargados(id),
    canal            text NOT NULL CHECK (canal IN ('email', 'webhook', 'slack', 'apprise')),
    direccion        text NOT NULL,
    tipo             text NOT NULL CHECK (tipo IN ('pendiente', 'escalado')),
    paso             integer NOT NULL DEFAULT 0 CHECK (paso >= 0),
    datos            jsonb NOT NULL,
    urgente          boolean NOT NULL DEFAULT false,
    estado           text NOT NULL DEFAULT 'pendiente'
                     CHECK (estado IN ('pendiente', 'enviado', 'fallido', 'descartado')),
    intentos         integer NOT NULL DEFAULT 0 CHECK (intentos >= 0),
    proximo_intento  timestamptz NOT NULL DEFAULT now(),
    ultimo_error     text,
    creado           timestamptz NOT NULL DEFAULT now(),
    enviado          timestamptz
);
CREATE INDEX avisos_salida_pendientes_idx ON avisos_salida (proximo_intento, id) WHERE estado = 'pendiente';
CREATE INDEX avisos_salida_hilo_idx ON avisos_salida (thread_id, interrupt_id);
