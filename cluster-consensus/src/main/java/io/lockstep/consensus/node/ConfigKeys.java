package io.lockstep.consensus.node;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.Set;
import java.util.TreeSet;

/**
 * Every key a member reads, gathered from the settings classes' constants so that a new key cannot be left out: what
 * {@link ClusterNodeBuilder#set} accepts, and what a configuration file may hold without a warning. A misspelt key
 * would otherwise be ignored in silence, and its default used.
 */
final class ConfigKeys
{
    static final Set<String> ALL = collect(NodeConfig.class, SecuritySettings.class, TlsSettings.class,
        MetricsSettings.class, IdleSettings.class, ThreadingSettings.class, MemorySettings.class);

    private ConfigKeys()
    {
    }

    private static Set<String> collect(final Class<?>... settings)
    {
        final Set<String> keys = new TreeSet<>();
        for (final Class<?> type : settings)
        {
            for (final Field field : type.getDeclaredFields())
            {
                final int modifiers = field.getModifiers();
                if (Modifier.isStatic(modifiers) && Modifier.isFinal(modifiers) && String.class == field.getType())
                {
                    try
                    {
                        field.setAccessible(true);
                        final String value = (String)field.get(null);
                        if (null != value && value.startsWith("lockstep."))
                        {
                            keys.add(value);
                        }
                    }
                    catch (final IllegalAccessException ex)
                    {
                        throw new IllegalStateException("cannot read " + field, ex);
                    }
                }
            }
        }
        return Set.copyOf(keys);
    }
}
