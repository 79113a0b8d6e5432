-- Quien deja de poder firmar suelta al momento sus «lo atiendo yo» y las bandejas abiertas
-- se enteran (issue 25, punto 2).
--
-- No hay orden ni API para dar de baja: se hace en la base (UPDATE encargados SET activo =
-- false), o se le cambia la tienda o el rol, o se le quita una tienda de su región. Por eso
-- lo hace un disparador, en la misma transacción que el cambio, venga de donde venga:
-- (1) suelta las reclamaciones pendientes de esa persona en las tiendas donde ya no firma
-- (firmantes_tienda ya no la lista: de baja, en ninguna) y (2) avisa por mensajes_hilo
-- («bandeja:TIENDA», como mensajes.avisar_bandeja), con lo que cada bandeja en vivo relee,
-- vuelve a comprobar a quien la mira (agente.web.vigencia) y, si es la persona dada de
-- baja, se cierra con un evento «fin».
-- Una aprobación «decidiendo» no se toca: esa decisión ya está en curso.

CREATE FUNCTION soltar_reclamos_de(encargado text, tienda_aviso text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    t text;
BEGIN
    FOR t IN
        UPDATE aprobaciones_pendientes a
        SET asignada_a = NULL, reclamada_hasta = NULL
        WHERE a.asignada_a = encargado AND a.estado = 'pendiente'
          AND NOT EXISTS (SELECT 1 FROM firmantes_tienda f
                          WHERE f.encargado_id = encargado AND f.tienda = a.tienda)
        RETURNING a.tienda
    LOOP
        PERFORM pg_notify('mensajes_hilo', 'bandeja:' || t);
    END LOOP;
    -- Aunque no tuviera reclamaciones: sus bandejas abiertas tienen que enterarse ya.
    PERFORM pg_notify('mensajes_hilo', 'bandeja:' || tienda_aviso);
END
$$;

CREATE FUNCTION encargado_cambiado() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM soltar_reclamos_de(NEW.id, OLD.tienda);
    RETURN NULL;
END
$$;
CREATE TRIGGER encargados_sin_acceso AFTER UPDATE OF activo, tienda, rol ON encargados
    FOR EACH ROW
    WHEN (OLD.activo IS DISTINCT FROM NEW.activo OR OLD.tienda IS DISTINCT FROM NEW.tienda
          OR OLD.rol IS DISTINCT FROM NEW.rol)
    EXECUTE FUNCTION encargado_cambiado();

CREATE FUNCTION tienda_regional_quitada() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM soltar_reclamos_de(OLD.encargado_id, OLD.tienda);
    RETURN NULL;
END
$$;
CREATE TRIGGER tiendas_regionales_sin_acceso AFTER DELETE ON tiendas_regionales
    FOR EACH ROW EXECUTE FUNCTION tienda_regional_quitada();

-- Lo que ya estaba así antes de esta migración.
UPDATE aprobaciones_pendientes a
SET asignada_a = NULL, reclamada_hasta = NULL
WHERE a.asignada_a IS NOT NULL AND a.estado = 'pendiente'
  AND NOT EXISTS (SELECT 1 FROM firmantes_tienda f
                  WHERE f.encargado_id = a.asignada_a AND f.tienda = a.tienda);
