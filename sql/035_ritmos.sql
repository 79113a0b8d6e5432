-- Ritmos que se cumplen con peticiones a la vez (issue 39, punto 3).
-- Cada petición de mensaje que pasa el ritmo del cliente deja aquí su fila, en la misma
-- transacción que la cuenta, bajo el candado consultivo del ritmo de ese cliente
-- (nucleo/claves_candado.py, CANDADO_RITMO_SQL): lo que se cuenta y lo que se gasta
-- van juntos. Antes se contaban los mensajes ya guardados, que se guardan más tarde, dentro
-- del turno: varias peticiones a la vez pasaban todas con el contador por debajo.
CREATE TABLE IF NOT EXISTS ritmo_mensajes (
    id          bigserial PRIMARY KEY,
    cliente_id  text NOT NULL,
    creado      timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX IF NOT EXISTS ritmo_mensajes_cliente_idx ON ritmo_mensajes (cliente_id, creado);
