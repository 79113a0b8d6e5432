-- Umbrales por tienda y el veredicto estable de cada llamada evaluada.
CREATE TABLE politicas_tienda (
    tienda                     text PRIMARY KEY REFERENCES tiendas(id),
    limite_reembolso           numeric(12,2) NOT NULL DEFAULT 60.00 CHECK (limite_reembolso >= 0),
    devoluciones_max_30d       integer NOT NULL DEFAULT 2 CHECK (devoluciones_max_30d > 0),
    ventana_devoluciones_dias  integer NOT NULL DEFAULT 30 CHECK (ventana_devoluciones_dias > 0),
    dias_desde_entrega         integer NOT NULL DEFAULT 30 CHECK (dias_desde_entrega >= 0),
    diferencia_max_sustitucion numeric(12,2) NOT NULL DEFAULT 0.00 CHECK (diferencia_max_sustitucion >= 0),
    horas_caducidad            integer NOT NULL DEFAULT 72 CHECK (horas_caducidad > 0)
);

CREATE TABLE evaluaciones_politica (
    thread_id           text NOT NULL,
    tool_call_id        text NOT NULL CHECK (tool_call_id <> ''),
    herramienta         text NOT NULL,
    args                jsonb NOT NULL,
    tienda              text,
    cliente_id          text,
    requiere_encargado  boolean NOT NULL,
    motivos             jsonb NOT NULL DEFAULT '[]',
    umbrales            jsonb NOT NULL DEFAULT '{}',
    evaluada            timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (thread_id, tool_call_id)
);
