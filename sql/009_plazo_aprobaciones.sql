-- El plazo de cada aprobación se fija al pausar (horas de la tienda en ese momento) y es
-- un plazo de verdad: decidir después se rechaza aunque la pasada de caducidad no haya
-- llegado todavía; la pasada solo la caduca.
ALTER TABLE aprobaciones_pendientes ADD COLUMN caduca timestamptz;

UPDATE aprobaciones_pendientes a
SET caduca = a.creada + make_interval(hours => coalesce(
    (SELECT p.horas_caducidad FROM politicas_tienda p WHERE p.tienda = a.tienda), 72));

ALTER TABLE aprobaciones_pendientes ALTER COLUMN caduca SET NOT NULL;

-- La pasada de caducidad busca las vencidas sin recorrer la cola entera.
CREATE INDEX aprobaciones_caduca_idx ON aprobaciones_pendientes (caduca) WHERE estado = 'pendiente';
