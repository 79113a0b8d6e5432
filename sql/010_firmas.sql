-- Firmas escalonadas: la autoridad que exige cada pausa, fijada al pausar con la versión
-- de la matriz de su tienda, y las firmas que se van recogiendo hasta cumplirla.

-- Con el veredicto: qué versión de la matriz (y qué regla de ella) fijó la autoridad.
-- NULL en los veredictos de antes de esta migración (se leen como «una firma de encargado»).
ALTER TABLE evaluaciones_politica
    ADD COLUMN autoridad_matriz_id bigint REFERENCES matrices_autoridad(id),
    ADD COLUMN autoridad_regla     text;

-- En la cola: la autoridad de la pausa (la más exigente de sus acciones, y la de cada una),
-- fijada al pausar; solo una edición la vuelve a calcular (para el importe editado).
ALTER TABLE aprobaciones_pendientes
    ADD COLUMN requisito jsonb NOT NULL DEFAULT
        '{"firmas_necesarias": 1, "rol_minimo": "encargado", "importe": null, "version_matriz": null, "matriz_id": null, "acciones": []}'::jsonb;

-- Cada firma recogida: quién, con qué rol, cuándo y qué decidió. Una persona firma una vez
-- cada pausa. No se borran al aplicar: la auditoría comprueba con ellas que el efecto
-- tenía las firmas que exigía.
CREATE TABLE firmas_aprobacion (
    id            bigserial PRIMARY KEY,
    thread_id     text NOT NULL REFERENCES consultas_asistente(thread_id),
    interrupt_id  text NOT NULL,
    encargado_id  text NOT NULL REFERENCES encargados(id),
    rol           text NOT NULL REFERENCES roles_firma(rol),
    tienda        text NOT NULL REFERENCES tiendas(id),
    decisiones    jsonb NOT NULL,
    requisito     jsonb NOT NULL,
    firmada       timestamptz NOT NULL DEFAULT clock_timestamp(),
    UNIQUE (thread_id, interrupt_id, encargado_id)
);
CREATE INDEX firmas_aprobacion_hilo_idx ON firmas_aprobacion (thread_id, interrupt_id, id);

-- Las decisiones de antes de esta migración fueron una firma de su encargado.
INSERT INTO firmas_aprobacion (thread_id, interrupt_id, encargado_id, rol, tienda, decisiones, requisito, firmada)
SELECT d.thread_id, d.interrupt_id, d.encargado_id, e.rol, d.tienda, d.decisiones,
       '{"firmas_necesarias": 1, "rol_minimo": "encargado"}'::jsonb, d.decidida
FROM decisiones_encargado d JOIN encargados e ON e.id = d.encargado_id
ON CONFLICT DO NOTHING;

-- Historia de los umbrales de cada tienda: cada cambio hecho con `agente politica fijar` o
-- la API es una versión nueva con quién y cuándo (la fila de politicas_tienda es la vigente).
CREATE TABLE politicas_tienda_versiones (
    tienda      text NOT NULL REFERENCES tiendas(id),
    version     integer NOT NULL CHECK (version > 0),
    umbrales    jsonb NOT NULL,
    creada      timestamptz NOT NULL DEFAULT now(),
    creada_por  text NOT NULL CHECK (creada_por <> ''),
    motivo      text,
    PRIMARY KEY (tienda, version)
);
