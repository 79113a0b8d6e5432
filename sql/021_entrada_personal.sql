-- Entrada del personal sin la CLI (issue 28): OpenID Connect y enlace por correo.
-- El encargado se reconoce por su correo (el verificado por el proveedor, o el que recibe
-- el enlace): uno por persona, sin distinguir mayúsculas.
ALTER TABLE encargados ADD COLUMN IF NOT EXISTS email text;
CREATE UNIQUE INDEX IF NOT EXISTS encargados_email_uidx ON encargados (lower(email))
    WHERE email IS NOT NULL;

-- Enlaces de entrada por correo: solo el hash SHA-256 del token (el token viaja en el
-- correo y en el fragmento de la URL, nunca se guarda ni llega al log de accesos).
CREATE TABLE IF NOT EXISTS enlaces_entrada (
    hash          bytea PRIMARY KEY,
    encargado_id  text NOT NULL REFERENCES encargados(id) ON DELETE CASCADE,
    email         text NOT NULL,
    creado        timestamptz NOT NULL DEFAULT now(),
    caduca        timestamptz NOT NULL,
    usado         timestamptz
);
CREATE INDEX IF NOT EXISTS enlaces_entrada_caduca_idx ON enlaces_entrada (caduca);

-- Peticiones de enlace, para el límite de ritmo por dirección y por IP. Se anota cada
-- petición, exista o no la dirección (la respuesta no lo revela); la clave es un hash.
CREATE TABLE IF NOT EXISTS intentos_entrada (
    id      bigserial PRIMARY KEY,
    clave   text NOT NULL,
    creado  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS intentos_entrada_clave_idx ON intentos_entrada (clave, creado);
