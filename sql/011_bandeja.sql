-- Bandeja de producto: la nota del encargado al cliente, «lo atiendo yo» y los mensajes
-- retenidos que el agente ya ha contestado.

-- La nota va con la decisión (write-ahead): si el proceso muere antes de aplicarla, el
-- conciliador la añade igual al mensaje final del cliente.
ALTER TABLE decisiones_encargado ADD COLUMN nota text CHECK (length(nota) <= 2000);

-- «Lo atiendo yo»: quién la reclamó (asignada_a) y hasta cuándo; pasado ese momento, o
-- al decidirse (la fila se borra), deja de estar reclamada.
ALTER TABLE aprobaciones_pendientes ADD COLUMN reclamada_hasta timestamptz;

-- Un mensaje retenido se entrega al agente tras la decisión: desde entonces no se vuelve
-- a entregar (sigue marcado como retenido en la transcripción).
ALTER TABLE mensajes_conversacion ADD COLUMN entregado_en timestamptz;
CREATE INDEX mensajes_retenidos_sin_entregar_idx ON mensajes_conversacion (thread_id, id)
    WHERE retenido AND entregado_en IS NULL;

-- El historial de decisiones por tienda y fecha (pestaña «Historial» y su CSV).
CREATE INDEX decisiones_tienda_decidida_idx ON decisiones_encargado (tienda, decidida DESC, id DESC);
