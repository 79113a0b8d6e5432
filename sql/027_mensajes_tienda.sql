-- «Escribir al cliente»: un mensaje de una persona de la tienda en una conversación.
-- Tabla propia (no mensajes_conversacion ni el estado del grafo): el conciliador, los
-- retenidos y el cierre de turnos no la leen, así que escribir nunca reanuda ni toca una
-- aprobación pendiente. Cada fila es a la vez el mensaje y su auditoría (quién, cuándo,
-- qué, en qué hilo); no se modifica ni se borra.
-- El id sale de la MISMA secuencia que mensajes_conversacion: la transcripción se mezcla
-- por id y el chat en directo (id > desde, Last-Event-ID) recibe los dos tipos igual.
CREATE TABLE mensajes_tienda (
    id            bigint PRIMARY KEY DEFAULT nextval('mensajes_conversacion_id_seq'),
    thread_id     text NOT NULL REFERENCES consultas_asistente(thread_id),
    tienda        text NOT NULL REFERENCES tiendas(id),
    encargado_id  text NOT NULL REFERENCES encargados(id),
    autor_nombre  text NOT NULL CHECK (autor_nombre <> ''),
    texto         text NOT NULL CHECK (length(btrim(texto)) > 0 AND length(texto) <= 2000),
    creado        timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX mensajes_tienda_hilo_idx ON mensajes_tienda (thread_id, id);
CREATE INDEX mensajes_tienda_encargado_idx ON mensajes_tienda (encargado_id, creado);

CREATE FUNCTION mensajes_tienda_inmutables() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'mensajes_tienda es un registro de auditoría: no se modifica ni se borra';
END $$;
CREATE TRIGGER mensajes_tienda_inmutables BEFORE UPDATE OR DELETE ON mensajes_tienda
    FOR EACH ROW EXECUTE FUNCTION mensajes_tienda_inmutables();

-- La búsqueda de conversaciones de la bandeja: por tienda, la más reciente primero.
CREATE INDEX IF NOT EXISTS consultas_asistente_tienda_idx ON consultas_asistente (tienda, actualizada DESC);
