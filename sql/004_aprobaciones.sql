-- Conversaciones, cola de aprobaciones y decisiones de los encargados.
CREATE TABLE consultas_asistente (
    thread_id     text PRIMARY KEY,
    cliente_id    text NOT NULL REFERENCES clientes(id),
    tienda        text NOT NULL REFERENCES tiendas(id),
    canal         text NOT NULL DEFAULT 'web',
    creada        timestamptz NOT NULL DEFAULT now(),
    actualizada   timestamptz NOT NULL DEFAULT now(),
    estado        text NOT NULL DEFAULT 'abierta'
                  CHECK (estado IN ('abierta', 'esperando_aprobacion', 'necesita_persona', 'cerrada'))
);
CREATE INDEX consultas_cliente_idx ON consultas_asistente (cliente_id, creada DESC);
CREATE INDEX consultas_abiertas_idx ON consultas_asistente (actualizada) WHERE estado <> 'cerrada';

CREATE TABLE aprobaciones_pendientes (
    thread_id     text PRIMARY KEY REFERENCES consultas_asistente(thread_id),
    tienda        text NOT NULL REFERENCES tiendas(id),
    cliente_id    text NOT NULL REFERENCES clientes(id),
    interrupt_id  text NOT NULL,
    peticion      jsonb NOT NULL,
    contexto      jsonb NOT NULL,
    creada        timestamptz NOT NULL DEFAULT now(),
    asignada_a    text REFERENCES encargados(id),
    estado        text NOT NULL DEFAULT 'pendiente' CHECK (estado IN ('pendiente', 'decidiendo')),
    trace_id      text
);
-- La bandeja de una tienda, la más antigua primero.
CREATE INDEX aprobaciones_tienda_creada_idx ON aprobaciones_pendientes (tienda, creada, thread_id);

CREATE TABLE decisiones_encargado (
    id               bigserial PRIMARY KEY,
    thread_id        text NOT NULL REFERENCES consultas_asistente(thread_id),
    interrupt_id     text NOT NULL,
    encargado_id     text NOT NULL,
    tienda           text NOT NULL REFERENCES tiendas(id),
    peticion         jsonb NOT NULL,
    decisiones       jsonb NOT NULL,
    decidida         timestamptz NOT NULL DEFAULT now(),
    espera_segundos  numeric(12,2) NOT NULL,
    aplicada         timestamptz,
    resultado        text,
    trace_id         text,
    UNIQUE (thread_id, interrupt_id)
);
CREATE INDEX decisiones_sin_aplicar_idx ON decisiones_encargado (decidida) WHERE aplicada IS NULL;

-- Lo que el cliente ve de su conversación (sin llamadas a herramientas ni notas
-- internas), con fecha. Un mensaje del cliente recibido mientras su hilo esperaba a un
-- encargado se guarda con retenido = true: no llega al agente y no se pierde.
CREATE TABLE mensajes_conversacion (
    id          bigserial PRIMARY KEY,
    thread_id   text NOT NULL REFERENCES consultas_asistente(thread_id),
    rol         text NOT NULL CHECK (rol IN ('cliente', 'agente')),
    texto       text NOT NULL,
    retenido    boolean NOT NULL DEFAULT false,
    creado      timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX mensajes_conversacion_hilo_idx ON mensajes_conversacion (thread_id, id);
