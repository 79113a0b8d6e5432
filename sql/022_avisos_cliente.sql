-- Avisos al cliente que ya cerró el chat (docs/correos-cliente.md).
--
-- 1. La misma bandeja de salida lleva también los avisos a clientes: una fila con
--    cliente_id (y sin encargado_id), canal 'cliente' (la ruta real, correo o Apprise, la
--    eligen los ajustes de la tienda al entregar) y tipo 'cliente'. Clave determinista por
--    suceso: una decisión, un pago completado o un asiento marcado avisan una vez.
ALTER TABLE avisos_salida ALTER COLUMN encargado_id DROP NOT NULL;
ALTER TABLE avisos_salida ADD COLUMN cliente_id text REFERENCES clientes(id) ON DELETE CASCADE;
ALTER TABLE avisos_salida ADD CONSTRAINT avisos_salida_destinatario_check
    CHECK ((encargado_id IS NULL) <> (cliente_id IS NULL));
ALTER TABLE avisos_salida DROP CONSTRAINT avisos_salida_canal_check;
ALTER TABLE avisos_salida ADD CONSTRAINT avisos_salida_canal_check
    CHECK (canal IN ('email', 'webhook', 'slack', 'apprise', 'cliente'));
ALTER TABLE avisos_salida DROP CONSTRAINT avisos_salida_tipo_check;
ALTER TABLE avisos_salida ADD CONSTRAINT avisos_salida_tipo_check
    CHECK (tipo IN ('pendiente', 'escalado', 'cambio_politica', 'cliente'));
ALTER TABLE avisos_salida ADD CONSTRAINT avisos_salida_cliente_check
    CHECK ((tipo = 'cliente') = (cliente_id IS NOT NULL) AND (tipo = 'cliente') = (canal = 'cliente'));
CREATE INDEX avisos_salida_cliente_idx ON avisos_salida (cliente_id) WHERE cliente_id IS NOT NULL;

-- 2. La baja del cliente (el enlace de cada correo): NULL = recibe avisos.
ALTER TABLE clientes ADD COLUMN avisos_baja timestamptz;

-- 3. Chats conectados: una fila por flujo SSE abierto de una conversación, con latido.
--    El flujo la renueva mientras está abierto y la borra al cerrarse; la de un proceso
--    que murió deja de contar cuando su latido envejece (agente.notificaciones.avisos_cliente).
CREATE TABLE presencia_chat (
    conexion   uuid PRIMARY KEY,
    cliente_id text NOT NULL REFERENCES clientes(id) ON DELETE CASCADE,
    thread_id  text NOT NULL,
    latido     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX presencia_chat_hilo_idx ON presencia_chat (thread_id, cliente_id, latido);
