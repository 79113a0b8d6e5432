-- Las ejecuciones (runs) del protocolo de LangGraph (/langgraph): cada turno de cliente o
-- firma que entra por el protocolo deja una fila, para que GET /threads/{id}/runs/{run_id},
-- join y la lista de runs respondan desde cualquier proceso. La conversación y las firmas
-- siguen en sus tablas; aquí solo está lo que el protocolo pregunta de una ejecución.
CREATE TABLE ejecuciones_protocolo (
    run_id        uuid PRIMARY KEY,
    thread_id     text NOT NULL REFERENCES consultas_asistente(thread_id) ON DELETE CASCADE,
    assistant_id  text NOT NULL,
    autor         text NOT NULL CHECK (autor <> ''),
    tipo          text NOT NULL CHECK (tipo IN ('turno', 'firma')),
    estado        text NOT NULL DEFAULT 'running'
                  CHECK (estado IN ('pending', 'running', 'error', 'success', 'timeout', 'interrupted')),
    metadatos     jsonb NOT NULL DEFAULT '{}'::jsonb,
    creada        timestamptz NOT NULL DEFAULT now(),
    actualizada   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ejecuciones_protocolo_hilo_idx ON ejecuciones_protocolo (thread_id, creada DESC);
