package io.lockstep.cluster.transport;

import org.agrona.collections.Int2IntHashMap;
import org.agrona.collections.Int2ObjectHashMap;

import java.util.ArrayList;
import java.util.List;

/**
 * The protocols one side of a {@link TcpTransport} reads: each SBE schema with the newest version it understands,
 * the package its generated codecs live in, and the {@link MessageShape} of every template. A message of a schema
 * or template not listed here is garbage. Built once, before the transport; read-only after.
 */
public final class MessageShapes
{
    private final Int2IntHashMap newestVersion = new Int2IntHashMap(-1);
    private final Int2ObjectHashMap<MessageShape> byTemplate = new Int2ObjectHashMap<>();
    private final List<String> codecPackages = new ArrayList<>();

    /**
     * @param schemaId      the schema's id.
     * @param newestVersion the newest version of it this side reads: a message saying it is newer is refused.
     * @param codecPackage  the package of the schema's generated codecs: an exception thrown there while a message
     *                      is decoded is the message's fault, not the receiver's.
     * @return this.
     */
    public MessageShapes schema(final int schemaId, final int newestVersion, final String codecPackage)
    {
        if (this.newestVersion.containsKey(schemaId))
        {
            throw new IllegalArgumentException("schema " + schemaId + " is listed twice");
        }
        this.newestVersion.put(schemaId, newestVersion);
        codecPackages.add(codecPackage + '.');
        return this;
    }

    /**
     * @param schemaId   a schema listed with {@link #schema}.
     * @param templateId the message's template id.
     * @param shape      its layout.
     * @return this.
     */
    public MessageShapes message(final int schemaId, final int templateId, final MessageShape shape)
    {
        if (!newestVersion.containsKey(schemaId))
        {
            throw new IllegalArgumentException("schema " + schemaId + " is not listed");
        }
        if (null != byTemplate.put(key(schemaId, templateId), shape))
        {
            throw new IllegalArgumentException("template " + templateId + " of schema " + schemaId + " twice");
        }
        return this;
    }

    /**
     * @param other more protocols (a schema may be listed by one side only).
     * @return this, with every schema and template of the other added.
     */
    public MessageShapes add(final MessageShapes other)
    {
        other.newestVersion.forEach((id, version) ->
        {
            if (newestVersion.containsKey(id))
            {
                throw new IllegalArgumentException("schema " + id + " is listed twice");
            }
            newestVersion.put(id, version);
        });
        other.byTemplate.forEach((key, shape) ->
        {
            if (null != byTemplate.put(key, shape))
            {
                throw new IllegalArgumentException("template " + (key & 0xFFFF) + " of schema " + (key >>> 16) +
                    " is listed twice");
            }
        });
        codecPackages.addAll(other.codecPackages);
        return this;
    }

    /**
     * @return the newest version of the schema this side reads, or -1 if it reads none of it.
     */
    public int newestVersion(final int schemaId)
    {
        return newestVersion.get(schemaId);
    }

    /**
     * @return the shape of that message, or null if this side does not know it.
     */
    public MessageShape shape(final int schemaId, final int templateId)
    {
        return byTemplate.get(key(schemaId, templateId));
    }

    /**
     * @return true if the class is one of the listed schemas' generated decoders, or an enum or set they decode
     * into: what reads a received message. Encoders are not: an encoder that throws is this side's own failure.
     */
    boolean isDecoding(final String className)
    {
        for (int i = 0; i < codecPackages.size(); i++)
        {
            final String p = codecPackages.get(i);
            if (className.startsWith(p) && className.indexOf('.', p.length()) < 0)
            {
                final int simple = Math.max(className.lastIndexOf('.'), className.lastIndexOf('$')) + 1;
                return !className.startsWith("Encoder", className.length() - "Encoder".length()) &&
                    simple < className.length();
            }
        }
        return false;
    }

    private static int key(final int schemaId, final int templateId)
    {
        return (schemaId << 16) | (templateId & 0xFFFF);
    }
}
